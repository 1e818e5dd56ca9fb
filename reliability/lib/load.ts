import { subscribe } from 'node:diagnostics_channel';
import { Client } from 'undici';
import { now, sleep } from './clock.ts';

/** What happened to one request. Times are ms since the epoch (`now()`). */
export interface Outcome {
  /** Index of the connection (client) that sent it. */
  conn: number;
  requestId: string;
  path: string;
  /** The request was meant to fail (`/work?fail=1`). */
  planned: boolean;
  /** When the request was handed to undici. */
  sentAt: number;
  /** When undici wrote its head to the socket (diagnostics channel `undici:client:sendHeaders`); undefined if never written. */
  writtenAt: number | undefined;
  endAt: number;
  /** Pid of the worker that answered the previous request on the same open socket; undefined on a new socket. */
  boundPid: number | undefined;
  /** HTTP status, 0 when no response arrived. */
  status: number;
  /** Pid in the response body, when there was one. */
  pid: number | undefined;
  /** Error code and message when no response arrived. */
  error: string | undefined;
}

export interface LoadOptions {
  port: number;
  /** Keep-alive connections, one undici Client (pipelining 1) each. */
  connections: number;
  /** Total requests per second over all connections; 0 = closed loop (each connection as fast as it can). */
  rate: number;
  /** The path of the i-th request, and whether it is meant to fail. */
  request?: (i: number) => { path: string; planned: boolean };
  /** Headers and body timeout of each request. Default 5000 ms. */
  timeoutMs?: number;
  /** Keep every outcome in `outcomes` (default true); off for long runs, which use `onOutcome`. */
  record?: boolean;
  onOutcome?: (o: Outcome) => void;
}

/**
 * A small load generator that records every request's outcome and timing,
 * and which worker each keep-alive socket is bound to: enough to tell which
 * failed requests were the killed worker's and which were accepted before a
 * signal. Rate-limited (open-loop pacing per connection) or closed-loop.
 */
export class Load {
  readonly outcomes: Outcome[] = [];
  readonly #o: LoadOptions;
  readonly #clients: Client[] = [];
  #loops: Promise<void>[] = [];
  #running = false;
  #counter = 0;
  startedAt = 0;
  stoppedAt = 0;

  constructor(options: LoadOptions) {
    this.#o = options;
  }

  get sent(): number {
    return this.#counter;
  }

  start(): this {
    this.#running = true;
    this.startedAt = now();
    this.#loops = Array.from({ length: this.#o.connections }, (_, i) => this.#loop(i));
    return this;
  }

  /** Stops sending, waits for the requests in flight, closes the sockets. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    this.stoppedAt = now();
    await Promise.all(this.#clients.map((c) => c.destroy().catch(() => {})));
  }

  async #loop(index: number): Promise<void> {
    const o = this.#o;
    const timeout = o.timeoutMs ?? 5_000;
    const client = new Client(`http://127.0.0.1:${o.port}`, {
      pipelining: 1,
      keepAliveTimeout: 120_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connectTimeout: timeout,
    });
    this.#clients.push(client);
    let connected = false;
    let bound: number | undefined;
    client.on('connect', () => {
      connected = true;
      bound = undefined;
    });
    client.on('disconnect', () => {
      connected = false;
      bound = undefined;
    });
    const interval = o.rate > 0 ? (o.connections * 1000) / o.rate : 0;
    let next = now() + Math.random() * interval;
    while (this.#running) {
      if (interval > 0) {
        await sleep(next - now());
        if (!this.#running) break;
        // never catch up with a burst: a late connection just carries on from now
        next = Math.max(next + interval, now());
      }
      const i = this.#counter++;
      const { path, planned } = o.request?.(i) ?? { path: '/who', planned: false };
      const requestId = `rel-${index}-${i}`;
      const boundPid = connected ? bound : undefined;
      const sentAt = now();
      const outcome: Outcome = {
        conn: index,
        requestId,
        path,
        planned,
        sentAt,
        writtenAt: undefined,
        endAt: 0,
        boundPid,
        status: 0,
        pid: undefined,
        error: undefined,
      };
      try {
        const res = await client.request({ method: 'GET', path, headers: { 'x-request-id': requestId } });
        const text = await res.body.text();
        outcome.status = res.statusCode;
        outcome.pid = pidOf(text);
        if (connected && outcome.pid !== undefined) bound = outcome.pid;
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        outcome.error = `${e.code ?? e.name}: ${e.message}`;
      }
      outcome.endAt = now();
      outcome.writtenAt = written.get(requestId);
      written.delete(requestId);
      if (o.record ?? true) this.outcomes.push(outcome);
      o.onOutcome?.(outcome);
      // closed loop: do not spin on a refused port
      if (interval === 0 && outcome.error !== undefined) await sleep(10);
    }
  }
}

/**
 * When each request's head went to its socket, by request id: a busy client can hand a request to undici
 * before an event and write it after, and what the server can have received is what was written.
 */
const written = new Map<string, number>();
subscribe('undici:client:sendHeaders', (message) => {
  const id = /x-request-id: (rel-[\d-]+)/i.exec((message as { headers: string }).headers)?.[1];
  if (id !== undefined) written.set(id, now());
});

function pidOf(text: string): number | undefined {
  const match = /"pid":(\d+)/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** Closed-loop throughput of the service with `connections` connections over `durationMs` (after `warmupMs`). */
export async function measureCapacity(
  port: number,
  path: string,
  connections: number,
  durationMs: number,
  warmupMs: number,
): Promise<number> {
  const warm = new Load({ port, connections, rate: 0, request: () => ({ path, planned: false }), record: false }).start();
  await sleep(warmupMs);
  await warm.stop();
  let ok = 0;
  const load = new Load({
    port,
    connections,
    rate: 0,
    request: () => ({ path, planned: false }),
    record: false,
    onOutcome: (o) => {
      if (o.status === 200) ok++;
    },
  }).start();
  await sleep(durationMs);
  await load.stop();
  return ok / ((load.stoppedAt - load.startedAt) / 1000);
}
