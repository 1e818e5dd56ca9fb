import { subscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { PongMessage } from '../ipc/protocol.ts';

export type VitalSigns = Omit<PongMessage, 'v' | 'type' | 'seq' | 'routes'>;

const NS_PER_MS = 1e6;

/**
 * What a worker tells the primary with every heartbeat: its resident memory,
 * the requests it has received (Node's own `http.server.request.start`
 * diagnostics channel: the App knows nothing of it), and how busy its event
 * loop was since the previous sample (utilization, delay percentiles). The
 * primary recycles on the first two and exports the others per worker.
 *
 * @example
 * const vitals = new Vitals();
 * process.send(msg.pong(seq, vitals.sample()));
 */
export class Vitals {
  #requests = 0;
  #elu = performance.eventLoopUtilization();
  readonly #delay = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    subscribe('http.server.request.start', () => {
      this.#requests++;
    });
    this.#delay.enable();
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
    return vitals;
  }
}
