import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { PongMessage } from '../ipc/protocol.ts';
import { availableCpus } from '../utils/cpus.ts';
import {
  type Capacity,
  initialScaleState,
  type LoadSample,
  SCALE_DEFAULTS,
  type ScalePolicy,
  type ScaleState,
  scaleStep,
} from './autoscale-rule.ts';
import { cgroupMemoryLimit } from './memory-limit.ts';
import type { WorkerRange } from './worker-range.ts';

/** What the container gives, read at each reading: the CPUs and the memory limit. */
export type ContainerLimits = () => { cpus: number; memoryLimitBytes: number | undefined };

export interface AutoscalerOptions {
  range: WorkerRange;
  /** `cluster.scaleDownAfterMs`. */
  scaleDownAfterMs: number;
  /** `cluster.heartbeatIntervalMs`: one reading per heartbeat round. */
  heartbeatIntervalMs: number;
  logger: Logger;
  /** The workers listening now (`Supervisor.upWorkers`). */
  upWorkers(): readonly Worker[];
  /** The workers the primary keeps now (`Supervisor.count`; a reload may have changed it). */
  count(): number;
  /** Moves the pod to `count` workers (`Supervisor.resize`): resolves once the new one listens, or the retired one is gone. */
  resize(count: number): Promise<void>;
  /** Default: `availableCpus()` and `cgroupMemoryLimit()`, the real container's. */
  limits?: ContainerLimits;
}

/** A worker's latest heartbeat answer, as far as scaling reads it. */
interface Heard {
  at: number;
  elu: number;
  delayP99Ms: number;
  rss: number;
}

/** Answers collected this long after the first of a round make its reading: the others of the round arrive meanwhile. */
const GATHER_MS = 50;

const MiB = 1_048_576;

/**
 * `workers: { min, max }`: the primary's workers follow the pod's load. Each heartbeat round's
 * answers (utilisation, event-loop delay, resident memory) become one reading of the listening
 * workers, which the rule (`scaleStep`, autoscale-rule.ts) turns into a decision; a change goes
 * through `Supervisor.resize`, in turn with the other graceful changes (a retired worker drains as on
 * SIGTERM, and its exit is no failure). Every decision is one `info` line with the figures behind it.
 * With a fixed `workers` it does nothing, and costs nothing: it reads no answer.
 *
 * @example
 * const autoscaler = new Autoscaler({ range, scaleDownAfterMs, heartbeatIntervalMs, logger,
 *   upWorkers: () => supervisor.upWorkers, count: () => supervisor.count, resize: (n) => supervisor.resize(n) });
 * // in the dispatcher: 'flotilla:pong': (message, worker) => autoscaler.answered(worker, message)
 */
export class Autoscaler {
  readonly #o: AutoscalerOptions;
  readonly #limits: ContainerLimits;
  #policy: ScalePolicy;
  #scales: boolean;
  #state: ScaleState;
  readonly #heard = new WeakMap<Worker, Heard>();
  #timer: NodeJS.Timeout | undefined;
  #lastReading = 0;
  #resizing = false;
  #stopped = false;

  constructor(options: AutoscalerOptions) {
    this.#o = options;
    this.#limits = options.limits ?? (() => ({ cpus: availableCpus(), memoryLimitBytes: cgroupMemoryLimit() }));
    this.#policy = policyOf(options.range, options.scaleDownAfterMs);
    this.#scales = options.range.scales;
    this.#state = initialScaleState(options.count(), Date.now());
  }

  /** A reload's new bounds (the supervisor was resized into them already). */
  follow(range: WorkerRange, scaleDownAfterMs: number): void {
    this.#policy = policyOf(range, scaleDownAfterMs);
    this.#scales = range.scales;
    this.#state = initialScaleState(this.#o.count(), Date.now());
  }

  /** No more decisions (the cluster shuts down). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** A worker's heartbeat answer: the first of a round takes a reading shortly after. */
  answered(worker: Worker, pong: PongMessage): void {
    if (!this.#scales || this.#stopped) return;
    const now = Date.now();
    this.#heard.set(worker, { at: now, elu: pong.elu, delayP99Ms: pong.delayP99Ms, rss: pong.rss });
    if (this.#timer !== undefined || now - this.#lastReading < this.#o.heartbeatIntervalMs / 2) return;
    this.#timer = setTimeout(() => this.#read(), GATHER_MS);
    this.#timer.unref();
  }

  #read(): void {
    this.#timer = undefined;
    if (this.#resizing || this.#stopped || !this.#scales) return;
    const now = Date.now();
    this.#lastReading = now;
    // an answer older than a few rounds (idle ones are 4 intervals apart) is from a worker that stopped answering
    const fresh = this.#o.upWorkers().flatMap((worker) => {
      const heard = this.#heard.get(worker);
      return heard !== undefined && now - heard.at <= 6 * this.#o.heartbeatIntervalMs ? [heard] : [];
    });
    const count = this.#o.count();
    if (count !== this.#state.workers) this.#state = initialScaleState(count, now);
    const within = Math.min(this.#policy.max, Math.max(this.#policy.min, count));
    if (within !== count) {
      // a change decided before a reload narrowed the range: back within it
      this.#resize(count, within, 'bounds', {});
      return;
    }
    const rss = fresh.reduce((sum, h) => sum + h.rss, 0);
    const sample: LoadSample = {
      at: now,
      workers: fresh.length,
      elu: fresh.length === 0 ? 0 : fresh.reduce((sum, h) => sum + h.elu, 0) / fresh.length,
      delayP99Ms: fresh.reduce((most, h) => Math.max(most, h.delayP99Ms), 0),
    };
    const { cpus, memoryLimitBytes } = this.#limits();
    const capacity: Capacity = {
      cpus,
      memoryLimitBytes,
      memoryUsedBytes: rss + process.memoryUsage.rss(),
      workerRssBytes: fresh.length === 0 ? 0 : rss / fresh.length,
    };
    if (this.#o.logger.isLevelEnabled('debug'))
      this.#o.logger.debug({ ...sample, cpus, memoryUsedBytes: capacity.memoryUsedBytes }, 'scaling reading');
    const { state, decision } = scaleStep(this.#state, sample, capacity, this.#policy);
    this.#state = state;
    if (decision.kind === 'none') return;
    const figures = {
      elu: round(sample.elu),
      delayP99Ms: round(sample.delayP99Ms),
      cpus,
      memoryMB: Math.round(capacity.memoryUsedBytes / MiB),
      memoryLimitMB: memoryLimitBytes === undefined ? null : Math.round(memoryLimitBytes / MiB),
      workerRssMB: Math.round(capacity.workerRssBytes / MiB),
    };
    if (decision.kind === 'held') {
      const why = {
        max: `at workers.max (${this.#policy.max})`,
        cpus: `as many workers as CPUs (${cpus})`,
        memory: 'one more would not fit in memory',
      };
      this.#o.logger.info({ workers: count, heldBy: decision.by, ...figures }, `workers busy, not scaling up: ${why[decision.by]}`);
      return;
    }
    this.#resize(decision.from, decision.to, decision.reason, figures);
  }

  #resize(from: number, to: number, reason: 'busy' | 'light' | 'bounds', figures: Record<string, unknown>): void {
    this.#o.logger.info({ from, to, reason, ...figures }, 'scaling workers');
    this.#resizing = true;
    this.#o
      .resize(to)
      .catch((error: unknown) => this.#o.logger.error({ err: error, from, to }, 'scaling workers failed'))
      .finally(() => {
        this.#resizing = false;
        // the cool-down counts from the change done: the new worker listening, or the retired one gone
        this.#state = initialScaleState(this.#o.count(), Date.now());
      });
  }
}

function policyOf(range: WorkerRange, scaleDownAfterMs: number): ScalePolicy {
  return { ...SCALE_DEFAULTS, min: range.min, max: range.max, scaleDownAfterMs };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
