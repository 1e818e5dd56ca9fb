import type { Worker } from 'node:cluster';
import { createServer, type Server, Socket } from 'node:net';
import type { Logger } from 'pino';
import { msg } from '../ipc/protocol.ts';
import { answerOverloaded } from '../process/overloaded-reply.ts';
import { acceptQueued } from '../utils/accept-queued.ts';
import { QueueCoDel, type QueueLimits } from './queue-codel.ts';
import { WaitingConnection } from './waiting-connection.ts';
import { WarmUp } from './warm-up.ts';

/**
 * Hand-offs a worker may have unacknowledged. A worker acknowledges a connection as soon as its event
 * loop reads the message, so a saturated worker takes connections at the pace it serves them. Beyond
 * the first, only while the oldest unacknowledged one is younger than {@link FRESH_MS}: a responsive
 * worker takes a burst of connections (a client pool opening dozens at once) in one turn of its loop,
 * and one that stops reading (stuck, or busy for longer than that) receives nothing more.
 */
const MAX_PENDING = 4;
const FRESH_MS = 2;

export interface DistributorOptions {
  /** `overload.enabled`: answer what waits too long with 503; otherwise everything waits, as with node:cluster. */
  shed: boolean;
  /** `overload.queueTargetMs`: the longest wait while the queue is standing. */
  targetMs: number;
  /** `overload.queueIntervalMs`: the longest wait while the queue keeps emptying; a queue not empty for this long is standing. */
  intervalMs: number;
  retryAfterS: number;
  /** Raw head lines the 503 carries: the security headers (`headerLines` of src/app/headers/security-headers.ts). */
  headers?: string;
  /**
   * Request paths (`/health`) whose connections, once the primary has read their request line while
   * they wait, leave the queue first and are never shed: a readiness probe must not fail because the
   * service is busy (see docs/guides/overload-and-timeouts.md).
   */
  priorityPaths: readonly string[];
  logger: Logger;
  metrics: DistributorMetrics;
  /** A worker's warm-up, ms (see `warm-up.ts`; its default when left out). */
  warmupMs?: number;
}

export interface DistributorMetrics {
  /** A connection the primary answered 503 (`queue`), or dropped because its client left while it waited (`client-gone`). */
  shed(reason: 'queue' | 'client-gone'): void;
  /** How long a connection waited in the primary before it was handed to a worker, seconds. */
  waited(seconds: number): void;
  /** The connections waiting now. */
  queued(length: number): void;
}

/** A connection's kernel socket as libuv accepted it (a `TCP` handle), before any net.Socket wraps it. */
interface RawHandle {
  close(): void;
}

/** An unacknowledged hand-off: when it was sent, and the primary's copy of a raw handle, closed once the worker has its own. */
interface Pending {
  at: number;
  handle: RawHandle | undefined;
}

interface Target {
  /** The unacknowledged hand-offs, oldest first. */
  pending: Pending[];
  /** False once the worker retires, refused a connection, or was told that none follows. */
  open: boolean;
}

/**
 * The cluster's connection hand-off with `cluster.balancing: primary`
 * (ARCHITECTURE.md, "A request's path"): the primary accepts each connection
 * as a raw handle (what node:cluster's round-robin does: no net.Socket in the
 * primary for a connection a worker can take at once), stamps its time, and
 * hands it over IPC to the worker with the fewest
 * unacknowledged hand-offs (ties in turn, so an idle cluster still spreads
 * long-lived connections). When no worker can take one, it waits in a queue,
 * read meanwhile so that a client that leaves is dropped rather than handed
 * off. The queue is kept short by CoDel (see `#expire`): once its oldest
 * connection has waited longer than `targetMs` for a whole `intervalMs`, what
 * waits longer than `targetMs` is answered 503 by the primary itself, until
 * the queue empties: the excess gets a fast answer, the rest a short wait.
 *
 * @example
 * const d = new Distributor(options);
 * await d.listen('0.0.0.0', 3000); d.add(worker); // then d.acked(worker, true) on each flotilla:handoff-ack
 */
export class Distributor {
  readonly #o: DistributorOptions;
  readonly #server: Server;
  readonly #targets = new Map<Worker, Target>();
  /** The workers in hand-off order: ties go to the one after the last chosen. */
  #order: Worker[] = [];
  #next = 0;
  readonly #warmUp: WarmUp;
  #queue: WaitingConnection[] = [];
  readonly #limits: QueueLimits;
  readonly #codel: QueueCoDel;
  #timer: NodeJS.Timeout | undefined;
  #accepted = 0;
  /** The queue's length as the gauge last heard it. */
  #reported = 0;
  #closed: Promise<void> | undefined;
  /** The listener is closed and the queue handed over: no connection follows for any worker. */
  #ended = false;
  readonly #emptied = Promise.withResolvers<void>();

  constructor(options: DistributorOptions) {
    this.#o = options;
    this.#limits = { targetMs: options.targetMs, intervalMs: options.intervalMs };
    this.#codel = new QueueCoDel(this.#limits);
    this.#warmUp = new WarmUp(options.warmupMs);
    this.#server = createServer();
    this.#server.on('error', (err) => options.logger.error({ err }, 'the listening socket failed'));
  }

  /** Binds the cluster's address; rejects with the listen error (`EADDRINUSE`…). */
  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host, port }, () => {
        this.#server.off('error', reject);
        // the listening handle's accepts come here, as node:cluster's round-robin takes them
        const handle = (this.#server as unknown as { _handle: { onconnection: (status: number, handle?: RawHandle) => void } })._handle;
        handle.onconnection = (status, accepted) => this.#onConnection(status, accepted);
        const address = this.#server.address();
        resolve(typeof address === 'object' && address !== null ? { host: address.address, port: address.port } : { host, port });
      });
    });
  }

  /** A worker was forked: the queue is patient until it has warmed up (see `warm-up.ts`). */
  starting(worker: Worker): void {
    this.#warmUp.forked(worker);
  }

  /** A worker listens: it takes connections from now on (one that comes up after `close()` is told at once that none follows). */
  add(worker: Worker): void {
    this.#warmUp.up(worker);
    if (this.#targets.has(worker)) return;
    this.#targets.set(worker, { pending: [], open: true });
    this.#order.push(worker);
    if (this.#ended) this.retire(worker);
    else this.#dispatch();
  }

  /** A worker exited: what it had not acknowledged is lost with it. */
  remove(worker: Worker): void {
    this.#warmUp.gone(worker);
    const target = this.#targets.get(worker);
    if (target === undefined) return;
    for (const { handle } of target.pending) handle?.close();
    this.#targets.delete(worker);
    this.#order = this.#order.filter((w) => w !== worker);
  }

  /** A worker retires: no connection is handed to it any more, and it is told so (after any already sent). */
  retire(worker: Worker): void {
    const target = this.#targets.get(worker);
    if (target === undefined || !target.open) return;
    target.open = false;
    send(worker, msg.handoffEnd());
  }

  /** A worker read a hand-off: it may take the next. A refusal (it no longer serves) closes it to hand-offs. */
  acked(worker: Worker, accepted: boolean): void {
    const target = this.#targets.get(worker);
    if (target === undefined) return;
    // the worker holds its own descriptor of a raw handle now: the primary's copy goes
    target.pending.shift()?.handle?.close();
    if (!accepted) target.open = false;
    this.#dispatch();
  }

  /**
   * The shutdown's hand-off: accepts what the kernel queued, closes the
   * listener, hands the queue to the workers still draining (or answers it
   * 503 as usual), then tells every worker that no connection follows.
   * Closing the listener with connections in its accept queue would reset them.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await acceptQueued(() => this.#accepted);
      this.#server.close();
      if (this.#queue.length > 0) await this.#emptied.promise;
      this.#ended = true;
      for (const worker of this.#targets.keys()) this.retire(worker);
    })();
    return this.#closed;
  }

  /** An accepted connection (`status` a negative errno when the accept failed: EMFILE…). */
  #onConnection(status: number, handle: RawHandle | undefined): void {
    if (status < 0 || handle === undefined) {
      this.#o.logger.warn({ errno: status }, 'a connection could not be accepted');
      return;
    }
    this.#accepted++;
    const now = performance.now();
    if (this.#queue.length === 0) {
      const worker = this.#pick();
      if (worker !== undefined) {
        this.#send(worker, handle, '', now, handle);
        return;
      }
    }
    // it waits: read meanwhile, through a net.Socket of the primary's own (paused until the queue reads it)
    const socket = new Socket({ handle: handle as never, readable: true, writable: true, pauseOnCreate: true } as never);
    this.#enqueue(new WaitingConnection(socket, now));
  }

  /**
   * The open worker with the fewest pending hand-offs, ties in turn; undefined when none can take one
   * (see `MAX_PENDING`: a worker with some pending takes more only while it answers fast).
   */
  #pick(): Worker | undefined {
    const n = this.#order.length;
    const now = performance.now();
    let best: Worker | undefined;
    let bestPending = MAX_PENDING;
    let bestAt = 0;
    for (let i = 0; i < n; i++) {
      const at = (this.#next + i) % n;
      const worker = this.#order[at] as Worker;
      const { pending, open } = this.#targets.get(worker) as Target;
      if (!open || pending.length >= bestPending || !worker.isConnected()) continue;
      if (pending.length > 0 && now - (pending[0] as Pending).at >= FRESH_MS) continue;
      best = worker;
      bestPending = pending.length;
      bestAt = at;
      if (bestPending === 0) break;
    }
    if (best !== undefined) this.#next = (bestAt + 1) % n;
    return best;
  }

  /** Hands a connection that waited to `worker`: what was read of it goes along, and node closes the primary's socket once sent. */
  #handOff(worker: Worker, waiting: WaitingConnection): void {
    this.#send(worker, waiting.socket, waiting.handOver(), waiting.since, undefined);
  }

  /** One hand-off; `own`: a raw handle whose primary copy {@link acked} closes. */
  #send(worker: Worker, connection: Socket | RawHandle, head: string, since: number, own: RawHandle | undefined): void {
    const now = performance.now();
    (this.#targets.get(worker) as Target).pending.push({ at: now, handle: own });
    this.#warmUp.handed(worker, now);
    this.#o.metrics.waited((now - since) / 1_000);
    try {
      worker.send(msg.connection(head), connection as Socket, { keepOpen: false }, (error) => {
        if (error !== null && error !== undefined) this.#lost(worker, error);
      });
    } catch (error) {
      this.#lost(worker, error);
    }
  }

  /** The IPC channel refused the hand-off (the worker is gone): the connection cannot be saved. */
  #lost(worker: Worker, error: unknown): void {
    this.#o.logger.warn({ err: error, workerPid: worker.process.pid }, 'a connection could not be handed to a worker');
    this.acked(worker, false);
  }

  /** Waits for a worker, read meanwhile: a client that leaves is dropped, and a 503 can be answered without a reset. */
  #enqueue(waiting: WaitingConnection): void {
    waiting.read(this.#o.priorityPaths, () => {
      const at = this.#queue.indexOf(waiting);
      if (at === -1) return;
      this.#queue.splice(at, 1);
      this.#o.metrics.shed('client-gone');
      this.#changed();
    });
    this.#queue.push(waiting);
    this.#changed();
    this.#timer ??= setInterval(() => this.#expire(), Math.max(1, Math.min(this.#o.targetMs, this.#o.intervalMs) / 4));
  }

  /** Hands waiting connections to the workers that can take them, oldest first. */
  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#pick();
      if (worker === undefined) break;
      const probe = this.#queue.findIndex((w) => w.probe);
      const waiting = this.#queue.splice(probe === -1 ? 0 : probe, 1)[0] as WaitingConnection;
      waiting.release();
      this.#handOff(worker, waiting);
    }
    this.#changed();
  }

  /** The queue's deadline (see `QueueCoDel`): while it drops, what waited longer than the target is answered 503, readiness probes excepted. */
  #expire(): void {
    const oldest = this.#queue[0];
    if (oldest === undefined || (!this.#o.shed && this.#closed === undefined)) return;
    const now = performance.now();
    const limits = this.#warmUp.limits(now, this.#openWorkers(), this.#limits);
    if (!this.#codel.dropping(now, oldest.since, this.#closed !== undefined, limits)) return;
    let kept = 0;
    for (const waiting of this.#queue) {
      if (waiting.probe || now - waiting.since <= limits.targetMs) {
        this.#queue[kept++] = waiting;
        continue;
      }
      waiting.release();
      answerOverloaded(waiting.socket, { retryAfterS: this.#o.retryAfterS, head: waiting.head[0], headers: this.#o.headers ?? '' });
      this.#o.metrics.shed('queue');
    }
    this.#queue.length = kept;
    this.#changed();
  }

  /** The workers taking connections. */
  *#openWorkers(): Iterable<Worker> {
    for (const [worker, { open }] of this.#targets) if (open) yield worker;
  }

  /** After the queue changed: its gauge, its emptiness, and the deadline timer only while something waits. */
  #changed(): void {
    const length = this.#queue.length;
    if (length !== this.#reported) {
      this.#reported = length;
      this.#o.metrics.queued(length);
    }
    if (length > 0) return;
    this.#codel.emptied(performance.now());
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#closed !== undefined) this.#emptied.resolve();
  }
}

function send(worker: Worker, message: object): void {
  try {
    if (worker.isConnected()) worker.send(message);
  } catch {
    // a worker whose channel closed is on its way out: its exit is handled by the supervisor
  }
}
