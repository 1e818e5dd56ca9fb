import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The route work run from the queue: `started` is when the request was read (its queueing counts in
 * its time); `admitted`: admission control upstream let it in (the primary's queue), never shed it here;
 * `backlog`: how many requests still wait behind it (admission control sheds only a growing backlog).
 */
export type QueuedHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  started?: number,
  admitted?: boolean,
  backlog?: number,
  expectedMs?: number,
) => void;

/** What the queue asks of admission control (`Admission`): whether it sheds, and past what wait. */
export interface ArrivalShedding {
  readonly shedding: boolean;
  readonly shedAfterMs: number;
}

/** How long the queue serves requests before the event loop polls again (at least one request each time). */
const SLICE_MS = 5;

/** At most this many turns in a row only accept and read, serving nothing: a steady stream of connections cannot starve the queue. */
const DRAIN_TURNS = 16;

interface Waiting {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly at: number;
}

/**
 * The requests a process has read and not yet served, first in, first out. node:http would run each
 * request's route as soon as its bytes are parsed, in the poll phase of the event loop, and libuv
 * accepts one connection per listener per turn (see src/utils/accept-queued.ts): a worker busy with
 * 10 ms requests turns its loop a hundred times a second, so new connections wait in the kernel's
 * accept queue, where their age is invisible and admission control never sees them late.
 *
 * Here the poll phase only reads: requests are queued with the time they were read, and served after
 * it (the check phase), for {@link SLICE_MS} at most, before the loop polls again. A turn that accepted
 * a connection serves nothing (up to {@link DRAIN_TURNS} turns in a row): the kernel's queue is emptied
 * into this one first, where each request's wait is known. Admission control reads that wait (see
 * src/app/overload/admission.ts) and sheds the requests that waited past its target, oldest first, at a few µs
 * each, so that the kernel's queue never holds more than about a slice of work.
 *
 * Connections a primary hands over (`balancing: primary`, no listener of our own) waited in the
 * primary's queue, which sees them and sheds on its own (src/primary/distributor.ts): their first
 * request skips this queue (see src/app/transport/connections.ts); the later ones on them queue here, and a
 * hand-off drains nothing. A readiness probe (`GET /health`) skips the queue.
 *
 * @example
 * const queue = new RequestQueue(handler, { ownListener: true });
 * server.on('connection', () => queue.accepted());
 * server.on('request', (req, res) => queue.push(req, res));
 */
export class RequestQueue {
  readonly #handler: QueuedHandler;
  /** Served entries are cleared (`undefined`) until the array is emptied or trimmed. */
  readonly #waiting: (Waiting | undefined)[] = [];
  /** Index of the oldest waiting request in `#waiting` (shifting an array per request costs more). */
  #head = 0;
  #scheduled = false;
  /** A connection came in since the last serving turn. */
  #accepted = false;
  /** Turns in a row that only drained. */
  #drained = 0;
  readonly #ownListener: boolean;
  readonly #admission: ArrivalShedding | undefined;
  /** A request's time to serve, averaged over the slices (ms): a new arrival's wait is the queue's length times it. */
  #serviceMs = 0;
  /** Resolved once the queue is empty (see {@link idle}). */
  #waiters: (() => void)[] = [];

  /**
   * `ownListener`: the process accepts its connections itself, rather than being handed them.
   * `admission`: while it sheds, a request that would wait past its `shedAfterMs` is handed over at
   * once, to be turned away as it arrives rather than after it waited.
   */
  constructor(handler: QueuedHandler, { ownListener, admission }: { ownListener: boolean; admission?: ArrivalShedding | undefined }) {
    this.#handler = handler;
    this.#ownListener = ownListener;
    this.#admission = admission;
  }

  /** How many requests wait. */
  get size(): number {
    return this.#waiting.length - this.#head;
  }

  /**
   * Resolves once no request waits: every one read has been handed to the route work (where the App's
   * in-flight count sees it). A shutdown waits for it before it waits for the requests in flight.
   */
  idle(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** A connection was accepted (or handed over) in this turn of the loop; only our own listener's count. */
  accepted(): void {
    this.#accepted = this.#ownListener;
  }

  /** Queues a request just read; a readiness probe is served at once. */
  push(req: IncomingMessage, res: ServerResponse): void {
    const at = performance.now();
    if (req.url === '/health' && req.method === 'GET') {
      this.#handler(req, res, at);
      return;
    }
    if (this.#admission?.shedding === true) {
      const expectedMs = this.size * this.#serviceMs;
      if (expectedMs > this.#admission.shedAfterMs) {
        this.#handler(req, res, at, false, this.size, expectedMs);
        return;
      }
    }
    this.#waiting.push({ req, res, at });
    this.#reschedule();
  }

  readonly #serve = (): void => {
    this.#scheduled = false;
    if (this.#accepted && this.#drained < DRAIN_TURNS) {
      // the listener may hold more: read them first, and serve once a turn brings none
      this.#accepted = false;
      this.#drained++;
      this.#reschedule();
      return;
    }
    this.#accepted = false;
    this.#drained = 0;
    const start = performance.now();
    const until = start + SLICE_MS;
    const head = this.#head;
    try {
      do {
        const { req, res, at } = this.#waiting[this.#head] as Waiting;
        this.#waiting[this.#head] = undefined;
        this.#head++;
        this.#handler(req, res, at, false, this.#waiting.length - this.#head);
      } while (this.#head < this.#waiting.length && performance.now() < until);
    } finally {
      const perRequest = (performance.now() - start) / (this.#head - head);
      this.#serviceMs = this.#serviceMs === 0 ? perRequest : this.#serviceMs + (perRequest - this.#serviceMs) * 0.2;
      if (this.#head === this.#waiting.length) {
        this.#waiting.length = 0;
        this.#head = 0;
        if (this.#waiters.length > 0) for (const wake of this.#waiters.splice(0)) wake();
      } else {
        // a queue that never empties (steady overload) drops its served part now and then
        if (this.#head >= 1024 && this.#head * 2 >= this.#waiting.length) {
          this.#waiting.splice(0, this.#head);
          this.#head = 0;
        }
        this.#reschedule();
      }
    }
  };

  /** Serves (or drains) after this turn's poll phase, once. */
  #reschedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#serve);
  }
}
