import { subscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { PongMessage } from '../ipc/protocol.ts';
import { UPGRADE_START } from '../utils/upgrade-channel.ts';

export type VitalSigns = Omit<PongMessage, 'v' | 'type' | 'seq' | 'routes'>;

const NS_PER_MS = 1e6;
/** Above this event-loop utilization over a heartbeat interval, the loop is busy enough to measure its delay finely. */
const BUSY_ELU = 0.02;

/**
 * Whether a heartbeat's answer says the process did nothing since the previous one: no request
 * started and its event loop was no busier than a process answering heartbeats. The primary then
 * pings it less often (`idleIntervalMs` in src/primary/heartbeat.ts).
 */
export function isIdle(previous: Pick<VitalSigns, 'requests'> | undefined, pong: Pick<VitalSigns, 'requests' | 'elu'>): boolean {
  return previous !== undefined && previous.requests === pong.requests && pong.elu <= BUSY_ELU;
}

/**
 * What a worker tells the primary with every heartbeat: its resident memory,
 * the requests it has received (Node's own `http.server.request.start`
 * diagnostics channel: the App knows nothing of it), and how busy its event
 * loop was since the previous sample (utilization, delay percentiles). The
 * primary recycles on the first two and exports the others per worker.
 *
 * The delay is sampled every 10 ms (a libuv timer) only while the loop has
 * work: from the first request after an idle interval, or once an interval's
 * utilization passed 2 %, until an interval with neither. An idle process
 * thus has no 100-per-second wake-up for it, and its delay is 0.
 *
 * @example
 * const vitals = new Vitals();
 * process.send(msg.pong(seq, vitals.sample()));
 */
export class Vitals {
  #requests = 0;
  #elu = performance.eventLoopUtilization();
  /** Requests at the previous sample. */
  #sampled = 0;
  readonly #delay = monitorEventLoopDelay({ resolution: 10 });
  #measuring = false;

  #finished = 0;

  constructor() {
    const started = () => {
      this.#requests++;
      if (!this.#measuring) this.#measure(true);
    };
    subscribe('http.server.request.start', started);
    subscribe(UPGRADE_START, started);
    subscribe('http.server.response.finish', () => {
      this.#finished++;
    });
  }

  /** Grows with every request that starts or whose response ends: unchanged, nothing was counted meanwhile. */
  get activity(): number {
    return this.#requests + this.#finished;
  }

  #measure(on: boolean): void {
    this.#measuring = on;
    if (on) this.#delay.enable();
    else this.#delay.disable();
  }

  /** The vital signs since the previous call (the first: since construction). */
  sample(): VitalSigns {
    const elu = performance.eventLoopUtilization(this.#elu);
    this.#elu = performance.eventLoopUtilization();
    const d = this.#delay;
    const empty = d.count === 0;
    const vitals = {
      rss: process.memoryUsage.rss(),
      requests: this.#requests,
      elu: Number.isFinite(elu.utilization) ? elu.utilization : 0,
      delayP50Ms: empty ? 0 : d.percentile(50) / NS_PER_MS,
      delayP99Ms: empty ? 0 : d.percentile(99) / NS_PER_MS,
      delayMaxMs: empty ? 0 : d.max / NS_PER_MS,
    };
    d.reset();
    this.#measure(vitals.requests !== this.#sampled || vitals.elu > BUSY_ELU);
    this.#sampled = vitals.requests;
    return vitals;
  }
}
