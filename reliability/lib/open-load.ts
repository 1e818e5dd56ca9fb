import { connect, type Socket } from 'node:net';
import { now, sleep } from './clock.ts';

/** How the clients reach the server: a new connection per request, or a pool of keep-alive connections. */
export type ClientMode = 'fresh' | 'keep-alive';

/**
 * How a request ended:
 * - `answered`: a complete response (any status) within the client's timeout;
 * - `timeout`: none within it: the client gave up and destroyed its socket (`sentAt` undefined: it never left the
 *   client's own queue, all the pool's connections being busy);
 * - `refused` / `reset`: ECONNREFUSED, ECONNRESET or EPIPE;
 * - `closed`: the server ended the connection without a complete answer;
 * - `error`: anything else (its code in `error`).
 */
export type OpenKind = 'answered' | 'timeout' | 'refused' | 'reset' | 'closed' | 'error';

/** One request of the open-loop load. Times are ms since the epoch (`now()`). */
export interface OpenOutcome {
  /** Its `X-Request-Id`. */
  id: string;
  /** When it arrived (was due): the client's clock starts here, its timeout too. */
  startAt: number;
  /** When its head was written to a socket; undefined when it never was. */
  sentAt: number | undefined;
  endAt: number;
  kind: OpenKind;
  /** HTTP status, 0 without a response. */
  status: number;
  /** The response's `Retry-After`, when it had one. */
  retryAfter: string | undefined;
  /** Sent on a connection opened for it (always, with fresh connections). */
  newConnection: boolean;
  error: string | undefined;
}

export interface OpenLoadOptions {
  port: number;
  host?: string;
  path: string;
  /** Arrivals per second, on schedule whatever is still in flight. */
  rate: number;
  mode: ClientMode;
  /** The client gives up after this long from its arrival and destroys its socket. Default 5000 ms. */
  timeoutMs?: number;
  /** Prefix of the request ids (`<prefix>-<n>`), unique per load. */
  idPrefix: string;
  /** Keep-alive: the most connections the pool opens; beyond, requests wait in the client's queue. Default 1024. */
  maxConnections?: number;
}

/** A keep-alive connection of the pool. */
interface Conn {
  socket: Socket;
  connected: boolean;
  current: Pending | undefined;
  parser: ResponseParser;
}

interface Pending {
  outcome: OpenOutcome;
  timer: NodeJS.Timeout | undefined;
  conn: Conn | undefined;
  done: boolean;
}

/**
 * An open-loop HTTP/1.1 load on raw sockets (cheap: no HTTP client library),
 * recording every request's outcome; every request carries an `X-Request-Id`
 * so that the server's request lines can be matched with what its client saw.
 *
 * - `fresh`: each request on a TCP connection of its own, `Connection: close`
 *   (clients without keep-alive; each one goes through the server's accept).
 * - `keep-alive`: a pool as Node's `http.Agent` with `keepAlive` or a proxy's
 *   upstream pool keeps one: one request at a time per connection (no
 *   pipelining), the most recently freed idle connection reused first, a new
 *   connection when none is idle, up to `maxConnections` (then the client's own
 *   FIFO queue, the wait counting in the timeout).
 *
 * A client that gives up destroys its socket (a keep-alive connection too: its
 * request may still be in the server's queue, and HTTP/1.1 cannot cancel it).
 */
export class OpenLoad {
  readonly outcomes: OpenOutcome[] = [];
  /** Connections opened (keep-alive: over the pool's life), and the most open at once. */
  connectionsOpened = 0;
  peakConnections = 0;
  startedAt = 0;
  /** When the last arrival was due. */
  stoppedAt = 0;
  readonly #o: Required<OpenLoadOptions>;
  readonly #inFlight = new Set<Pending>();
  readonly #open = new Set<Conn>();
  readonly #idle: Conn[] = [];
  readonly #queue: Pending[] = [];
  #scheduler: Promise<void> = Promise.resolve();
  #running = false;
  #n = 0;
  /** Arrivals started so far, and the rate's origin: `setRate` changes the rate from now on. */
  #started = 0;
  #rate: number;
  #base = 0;
  #from = 0;
  #settled: (() => void) | undefined;

  constructor(options: OpenLoadOptions) {
    this.#o = { host: '127.0.0.1', timeoutMs: 5_000, maxConnections: 1_024, ...options };
    this.#rate = options.rate;
  }

  start(): this {
    this.#running = true;
    this.startedAt = now();
    this.#from = this.startedAt;
    this.#scheduler = this.#schedule();
    return this;
  }

  /** From now on, `rate` arrivals per second (the load goes on: e.g. a spike after steady traffic). */
  setRate(rate: number): void {
    this.#base = this.#started;
    this.#from = now();
    this.#rate = rate;
  }

  /** Requests still waiting for an answer (in flight or in the client's queue). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Stops the arrivals, waits until every request has settled (answered or given up), closes the pool. */
  async stop(): Promise<OpenOutcome[]> {
    this.#running = false;
    await this.#scheduler;
    if (this.#inFlight.size > 0) await new Promise<void>((resolve) => (this.#settled = resolve));
    for (const conn of this.#open) conn.socket.destroy();
    this.#open.clear();
    this.#idle.length = 0;
    return this.outcomes;
  }

  /** Every millisecond or so, the arrivals due by then. */
  async #schedule(): Promise<void> {
    while (this.#running) {
      const due = this.#base + Math.floor(((now() - this.#from) * this.#rate) / 1000);
      for (; this.#started < due; this.#started++) this.#arrive();
      await sleep(1);
    }
    this.stoppedAt = now();
  }

  #arrive(): void {
    const outcome: OpenOutcome = {
      id: `${this.#o.idPrefix}-${this.#n++}`,
      startAt: now(),
      sentAt: undefined,
      endAt: 0,
      kind: 'timeout',
      status: 0,
      retryAfter: undefined,
      newConnection: false,
      error: undefined,
    };
    const pending: Pending = { outcome, timer: undefined, conn: undefined, done: false };
    this.#inFlight.add(pending);
    pending.timer = setTimeout(() => this.#giveUp(pending), this.#o.timeoutMs);
    if (this.#o.mode === 'fresh') this.#fresh(pending);
    else this.#dispatch(pending);
  }

  #head(id: string, close: boolean): string {
    const { host, port, path } = this.#o;
    return `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nX-Request-Id: ${id}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
  }

  #finish(pending: Pending, kind: OpenKind, error?: string): void {
    if (pending.done) return;
    pending.done = true;
    clearTimeout(pending.timer);
    pending.outcome.endAt = now();
    pending.outcome.kind = kind;
    pending.outcome.error = error;
    this.outcomes.push(pending.outcome);
    this.#inFlight.delete(pending);
    if (!this.#running && this.#inFlight.size === 0) this.#settled?.();
  }

  #giveUp(pending: Pending): void {
    const conn = pending.conn;
    this.#finish(pending, 'timeout', pending.outcome.sentAt === undefined ? 'never sent' : 'no answer');
    if (conn !== undefined) this.#drop(conn);
  }

  #fresh(pending: Pending): void {
    const socket = connect({ host: this.#o.host, port: this.#o.port });
    this.#count(1);
    const conn: Conn = { socket, connected: false, current: pending, parser: new ResponseParser() };
    pending.conn = conn;
    pending.outcome.newConnection = true;
    socket.once('connect', () => {
      conn.connected = true;
      pending.outcome.sentAt = now();
      socket.write(this.#head(pending.outcome.id, true));
    });
    socket.on('data', (chunk: Buffer) => {
      const response = conn.parser.push(chunk);
      if (response === undefined) return;
      pending.outcome.status = response.status;
      pending.outcome.retryAfter = response.retryAfter;
      this.#finish(pending, 'answered');
      this.#drop(conn);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#finish(pending, kindOf(error), error.code ?? error.name);
      this.#drop(conn);
    });
    socket.on('close', () => {
      this.#finish(pending, 'closed', conn.parser.empty ? 'closed before any answer' : 'closed mid-answer');
      this.#drop(conn);
    });
  }

  /** Keep-alive: an idle connection of the pool, else a new one, else the client's queue. */
  #dispatch(pending: Pending): void {
    const idle = this.#idle.pop();
    if (idle !== undefined) this.#send(idle, pending);
    else if (this.#open.size < this.#o.maxConnections) this.#send(this.#connect(), pending);
    else this.#queue.push(pending);
  }

  #connect(): Conn {
    const socket = connect({ host: this.#o.host, port: this.#o.port });
    socket.setNoDelay(true);
    const conn: Conn = { socket, connected: false, current: undefined, parser: new ResponseParser() };
    this.#open.add(conn);
    this.#count(this.#open.size);
    socket.once('connect', () => {
      conn.connected = true;
      if (conn.current !== undefined) this.#write(conn, conn.current);
    });
    socket.on('data', (chunk: Buffer) => {
      const response = conn.parser.push(chunk);
      const pending = conn.current;
      if (response === undefined || pending === undefined) return;
      pending.outcome.status = response.status;
      pending.outcome.retryAfter = response.retryAfter;
      conn.current = undefined;
      pending.conn = undefined;
      this.#finish(pending, 'answered');
      if (response.close) this.#drop(conn);
      else this.#release(conn);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => this.#lost(conn, kindOf(error), error.code ?? error.name));
    socket.on('close', () => this.#lost(conn, 'closed', conn.parser.empty ? 'closed before any answer' : 'closed mid-answer'));
    return conn;
  }

  #send(conn: Conn, pending: Pending): void {
    conn.current = pending;
    pending.conn = conn;
    pending.outcome.newConnection = !conn.connected;
    if (conn.connected) this.#write(conn, pending);
  }

  #write(conn: Conn, pending: Pending): void {
    pending.outcome.sentAt = now();
    conn.parser.reset();
    conn.socket.write(this.#head(pending.outcome.id, false));
  }

  /** A connection that answered: the next queued request, or the idle stack. */
  #release(conn: Conn): void {
    const next = this.#nextQueued();
    if (next !== undefined) this.#send(conn, next);
    else this.#idle.push(conn);
  }

  /** A connection that failed or closed: its request (if any) failed with it. */
  #lost(conn: Conn, kind: OpenKind, error: string): void {
    const pending = conn.current;
    conn.current = undefined;
    if (pending !== undefined) this.#finish(pending, kind, error);
    this.#drop(conn);
  }

  #drop(conn: Conn): void {
    conn.socket.destroy();
    if (!this.#open.delete(conn)) return;
    const i = this.#idle.indexOf(conn);
    if (i !== -1) this.#idle.splice(i, 1);
    // a freed slot of the pool: the oldest queued request gets a new connection
    const next = this.#o.mode === 'keep-alive' ? this.#nextQueued() : undefined;
    if (next !== undefined) this.#send(this.#connect(), next);
  }

  /** The oldest request of the client's queue whose client has not given up yet. */
  #nextQueued(): Pending | undefined {
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      if (!next.done) return next;
    }
    return undefined;
  }

  #count(open: number): void {
    this.connectionsOpened++;
    if (this.#o.mode === 'fresh') open = this.#inFlight.size;
    if (open > this.peakConnections) this.peakConnections = open;
  }
}

function kindOf(error: NodeJS.ErrnoException): OpenKind {
  const code = error.code ?? error.name;
  return code === 'ECONNREFUSED' ? 'refused' : code === 'ECONNRESET' || code === 'EPIPE' ? 'reset' : 'error';
}

/** One HTTP/1.1 response at a time: its status, `Retry-After` and `Connection: close`, once complete (Content-Length or chunked). */
class ResponseParser {
  #text = '';

  get empty(): boolean {
    return this.#text === '';
  }

  reset(): void {
    this.#text = '';
  }

  push(chunk: Buffer): { status: number; retryAfter: string | undefined; close: boolean } | undefined {
    this.#text += chunk.toString('latin1');
    const end = this.#text.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const head = this.#text.slice(0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
    if (length !== undefined) {
      if (this.#text.length < end + 4 + Number(length)) return undefined;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      if (!this.#text.endsWith('0\r\n\r\n')) return undefined;
    }
    const response = {
      status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0),
      retryAfter: /\r\nretry-after:\s*([^\r]*)/i.exec(head)?.[1],
      close: /\r\nconnection:\s*close/i.test(head),
    };
    this.#text = '';
    return response;
  }
}
