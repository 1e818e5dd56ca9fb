import { connect } from 'node:net';
import { now, sleep } from './clock.ts';

/** How a request on its own connection ended. */
export type FreshKind = 'ok' | 'status' | 'refused' | 'reset' | 'closed' | 'timeout' | 'error';

/** One request on its own TCP connection. Times are ms since the epoch (`now()`). */
export interface FreshOutcome {
  /** When `connect()` was called. */
  startAt: number;
  /** When the handshake completed (the request is written at once); undefined when it never did. */
  connectedAt: number | undefined;
  endAt: number;
  kind: FreshKind;
  /** HTTP status, 0 without a response. */
  status: number;
  /** The pid in the body (`GET /who`), when there was one. */
  pid: number | undefined;
  /** The socket error's code, or what ended the request without an answer. */
  error: string | undefined;
}

/**
 * One `GET path` on a raw socket of its own with `Connection: close`, as a client
 * without keep-alive (or wrk -H 'Connection: close') sends it. Never rejects:
 * - `refused`: no listener (ECONNREFUSED);
 * - `reset`: ECONNRESET / EPIPE, e.g. a connection left in the accept queue of a listener that closed;
 * - `closed`: the server ended the connection without a complete answer;
 * - `timeout`: nothing complete within `timeoutMs` (a connection node:cluster handed to a dead worker).
 */
export function freshRequest(port: number, path: string, timeoutMs: number, host = '127.0.0.1'): Promise<FreshOutcome> {
  const outcome: FreshOutcome = {
    startAt: now(),
    connectedAt: undefined,
    endAt: 0,
    kind: 'error',
    status: 0,
    pid: undefined,
    error: undefined,
  };
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let received = '';
    let done = false;
    const finish = (kind: FreshKind, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      outcome.endAt = now();
      outcome.kind = kind;
      outcome.error = error;
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('timeout', 'no answer'), timeoutMs);
    socket.once('connect', () => {
      outcome.connectedAt = now();
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      if (head === -1) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(received.slice(0, head))?.[1] ?? Number.NaN);
      if (!Number.isFinite(length) || received.length < head + 4 + length) return;
      outcome.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const pid = /"pid":(\d+)/.exec(received)?.[1];
      outcome.pid = pid === undefined ? undefined : Number(pid);
      finish(outcome.status === 200 ? 'ok' : 'status');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.name;
      finish(code === 'ECONNREFUSED' ? 'refused' : code === 'ECONNRESET' || code === 'EPIPE' ? 'reset' : 'error', code);
    });
    socket.on('end', () => finish('closed', received === '' ? 'closed before any answer' : 'closed mid-answer'));
  });
}

export interface FreshLoadOptions {
  port: number;
  path?: string;
  /** New connections per second, opened on schedule whatever is still in flight (open loop); 0 = closed loop. */
  rate: number;
  /** Closed loop: requests (connections) in flight at once, each loop opening its next when the previous one ended. */
  concurrency?: number;
  timeoutMs?: number;
}

/**
 * A load of a new TCP connection per request, recording every outcome. Open
 * loop at `rate` (a slow answer delays no other request: the clients of a
 * public service do not wait for each other), or closed loop (`concurrency`
 * loops as fast as they can). What clients without keep-alive do, and what
 * goes through the accept queues on every request.
 */
export class FreshLoad {
  readonly outcomes: FreshOutcome[] = [];
  readonly #o: FreshLoadOptions;
  readonly #pending = new Set<Promise<void>>();
  #loops: Promise<void>[] = [];
  #running = false;
  startedAt = 0;
  stoppedAt = 0;

  constructor(options: FreshLoadOptions) {
    this.#o = options;
  }

  start(): this {
    this.#running = true;
    this.startedAt = now();
    this.#loops = this.#o.rate > 0 ? [this.#schedule()] : Array.from({ length: this.#o.concurrency ?? 8 }, () => this.#loop());
    return this;
  }

  /** Stops opening connections and waits for those in flight (at most `timeoutMs`). */
  async stop(): Promise<FreshOutcome[]> {
    this.#running = false;
    await Promise.all(this.#loops);
    await Promise.all(this.#pending);
    this.stoppedAt = now();
    return this.outcomes;
  }

  #one(): Promise<FreshOutcome> {
    const { port, path = '/who', timeoutMs = 3_000 } = this.#o;
    return freshRequest(port, path, timeoutMs).then((outcome) => {
      this.outcomes.push(outcome);
      return outcome;
    });
  }

  /** Open loop: every millisecond, the connections due by then. */
  async #schedule(): Promise<void> {
    let opened = 0;
    while (this.#running) {
      const due = Math.floor(((now() - this.startedAt) * this.#o.rate) / 1000);
      for (; opened < due; opened++) {
        const one = this.#one().then(() => {});
        this.#pending.add(one);
        void one.finally(() => this.#pending.delete(one));
      }
      await sleep(1);
    }
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const outcome = await this.#one();
      // do not spin on a refused port
      if (outcome.kind !== 'ok') await sleep(5);
    }
  }
}

/** The outcomes counted by kind, e.g. `3 reset, 1 timeout, 2 status 503`; `none` when empty. */
export function describeKinds(outcomes: readonly FreshOutcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.kind === 'status' ? `status ${o.status}` : o.kind;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
}
