import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { acceptQueued } from '../../utils/accept-queued.ts';
import type { Front } from './front.ts';
import { goAway } from './h2-goaway.ts';
import { type ArrivalShedding, type QueuedHandler, RequestQueue } from './request-queue.ts';

/** An HTTP/2 session's streams open (requests being served on it). */
interface SessionState {
  streams: number;
}

interface SocketState {
  served: boolean;
  active: number;
  /** When its last response ended (`performance.now()`). */
  idleSince: number;
}

/**
 * During the drain, a keep-alive connection is closed once it has been silent
 * this long. A client still using it sends its next request before then and
 * gets it answered, with `Connection: close`; closing sooner races that
 * request (a close that crosses a request on the wire resets it, and node:http
 * does not run a request read after its close).
 */
export const IDLE_CLOSE_MS = 200;

/**
 * The server's connections, as the shutdown and the timeouts need them (every
 * request passes through here on its way to the handler). On drain, a
 * keep-alive connection is closed once it has been silent for
 * {@link IDLE_CLOSE_MS} (one busy then: counted from the end of its response in
 * flight, which may have gone out before the drain, without `Connection: close`):
 * requests its client sends meanwhile are answered with `Connection: close`, after
 * which node:http closes it. One that was accepted but has not
 * sent its first request yet (a cluster hand-off racing the shutdown) gets a
 * short grace to send it, answered the same way, instead of being reset.
 * node:http's own `close()` resets both kinds alike. An HTTP/2 session is sent
 * GOAWAY at the drain, in two steps (`goAway`, h2-goaway.ts): the streams it has
 * open, and those the client sent before it saw the first GOAWAY, finish; later
 * ones are refused (REFUSED_STREAM); it closes once the last one ends.
 */
export class ConnectionTracker {
  readonly #front: Front;
  readonly #sockets = new Map<Socket, SocketState>();
  readonly #sessions = new Map<ServerHttp2Session, SessionState>();
  /** Keep-alive connections the drain ends once silent (see `#endWhenSilent`); it waits for them all. */
  readonly #silences = new Set<Promise<void>>();
  /** Fresh connections the drain waits for, and how to tell it they are settled. */
  readonly #awaited = new Map<Socket, () => void>();
  readonly #ownQueue: boolean;
  /** The requests read and not yet served (with `queued`). */
  readonly #queue: RequestQueue | undefined;
  /** Connections handed over (no listener of our own) may arrive until this resolves. */
  readonly #until: Promise<void> | undefined;
  #draining = false;
  #accepted = 0;

  /**
   * `ownQueue`: what the kernel queued on the listener is this process's to accept before closing it: a
   * socket of its own (SO_REUSEPORT) resets them when it closes, and so does the socket node:cluster shares
   * among a cluster's workers once the last one closed it (a worker cannot know it is not the last). `until`: connections are handed
   * over rather than accepted (see `ConnectionSource`): the drain takes them until it resolves.
   */
  constructor(
    front: Front,
    handler: QueuedHandler,
    {
      queued = false,
      ownQueue = false,
      until,
      upgrade,
      admission,
      streamTimeoutMs = 0,
    }: {
      /** Requests go through a {@link RequestQueue} rather than straight to `handler`. */
      queued?: boolean;
      ownQueue?: boolean;
      until?: Promise<void> | undefined;
      /** The App's admission control, which the request queue asks while it sheds (see request-queue.ts). */
      admission?: ArrivalShedding | undefined;
      /** Upgrade requests: their connection leaves the tracker (a WebSocket's is the hub's, see websocket-hub.ts). */
      upgrade?: ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) | undefined;
      /** An HTTP/2 stream inactive this long is cancelled (its client stopped reading, or sending): `timeouts.socketMs`. */
      streamTimeoutMs?: number;
    } = {},
  ) {
    this.#front = front;
    this.#ownQueue = ownQueue;
    this.#until = until;
    // handed connections (no listener of our own) wait in the primary's queue first
    const queue = queued ? new RequestQueue(handler, { ownListener: until === undefined, admission }) : undefined;
    this.#queue = queue;
    front.onAccepted(() => {
      this.#accepted++;
      queue?.accepted();
    });
    front.onConnection((socket: Socket) => {
      this.#sockets.set(socket, { served: false, active: 0, idleSince: 0 });
      socket.once('close', () => {
        this.#sockets.delete(socket);
        this.#awaited.get(socket)?.();
      });
    });
    front.onSession((session) => this.#session(session, streamTimeoutMs));
    front.onTimeout((connection) => this.#timedOut(connection));
    if (upgrade !== undefined)
      front.onUpgrade((req: IncomingMessage, socket: Duplex, head: Buffer) => {
        this.#sockets.delete(socket as Socket);
        this.#awaited.get(socket as Socket)?.();
        upgrade(req, socket, head);
      });
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      // an HTTP/2 request's socket is its session's, seen through a proxy: no entry, nothing to count per connection
      const state = this.#sockets.get(socket);
      // a handed connection's first request was admitted by the primary's queue: the worker sheds only those after it
      const admitted = this.#until !== undefined && state?.served === false;
      if (state !== undefined) {
        state.served = true;
        state.active++;
        this.#awaited.get(socket)?.();
        res.once('close', () => {
          state.active--;
          state.idleSince = performance.now();
          // a response with `Connection: close` (any sent while draining) has node:http close the connection itself
          if (this.#draining && state.active === 0 && res.getHeader('connection') !== 'close') this.#endWhenSilent(socket, state);
        });
      }
      // admitted upstream: served at once, as node:http would (the primary's queue is where it waited)
      if (queue === undefined || admitted) handler(req, res, undefined, admitted);
      else queue.push(req, res);
    };
    for (const server of front.requests) server.on('request', onRequest);
  }

  /**
   * An HTTP/2 session: its streams are counted (an idle one is closed politely when it times out) and
   * each is cancelled after `streamTimeoutMs` of inactivity; one that starts while draining is sent
   * GOAWAY at once, the streams its client sends before it sees it served.
   */
  #session(session: ServerHttp2Session, streamTimeoutMs: number): void {
    this.#accepted++;
    const state: SessionState = { streams: 0 };
    this.#sessions.set(session, state);
    session.on('stream', (stream: ServerHttp2Stream) => {
      state.streams++;
      if (streamTimeoutMs > 0) stream.setTimeout(streamTimeoutMs, () => stream.close(H2_CANCEL));
      stream.once('close', () => state.streams--);
    });
    session.once('close', () => this.#sessions.delete(session));
    // a session torn down by its client: node:http2 reports it on the session, which nobody else listens to
    session.on('error', () => {});
    if (this.#draining) void goAway(session);
  }

  /**
   * Stops accepting connections; closes each keep-alive connection once it
   * has been silent for {@link IDLE_CLOSE_MS} (a busy one: after the response it
   * is serving); resolves once that is done and every fresh connection has sent
   * its request or `graceMs` passed (stragglers are then destroyed). With a
   * listener of our own, what the kernel already queued on it is accepted
   * first (`acceptQueued`): closing a listening socket resets them. Handed
   * connections are taken until their source ends. Resolves once the requests
   * read meanwhile have left the request queue for the route work.
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    // a fresh one settles below; a busy one is ended once silent after its response (see the request handler)
    for (const [socket, state] of this.#sockets) if (state.served && state.active === 0) this.#endWhenSilent(socket, state);
    // HTTP/2: GOAWAY, the streams open go on; each session closes once its last stream ended
    const sessions = [...this.#sessions.keys()].map((session) => goAway(session));
    if (this.#ownQueue) await acceptQueued(() => this.#accepted);
    if (this.#until !== undefined) await this.#until;
    // net's close, not http's: http's would also reset the fresh connections.
    NetServer.prototype.close.call(this.#front.listener);
    const fresh: Socket[] = [];
    for (const [socket, state] of this.#sockets) if (!state.served) fresh.push(socket);
    const settled = fresh.map((socket) => new Promise<void>((resolve) => this.#awaited.set(socket, resolve)));
    await this.#settle(fresh, settled, graceMs);
    // the connections busy at the drain's start join these as their responses end
    while (this.#silences.size > 0) await Promise.all(this.#silences);
    // sessions that started meanwhile were sent GOAWAY as they came
    await Promise.all([...sessions, ...[...this.#sessions.keys()].map((session) => goAway(session))]);
    // what was read meanwhile is handed to the route work, where the App's in-flight count sees it
    await this.#queue?.idle();
  }

  /**
   * Ends a keep-alive connection once it has been silent for IDLE_CLOSE_MS since its last response; a
   * request arriving meanwhile is answered with `Connection: close` (and node:http closes it after).
   */
  #endWhenSilent(socket: Socket, state: SocketState): void {
    const silence = delay(Math.max(0, IDLE_CLOSE_MS - (performance.now() - state.idleSince))).then(() => {
      this.#silences.delete(silence);
      if (state.active === 0 && performance.now() - state.idleSince >= IDLE_CLOSE_MS) socket.end();
    });
    this.#silences.add(silence);
  }

  async #settle(fresh: readonly Socket[], settled: readonly Promise<void>[], graceMs: number): Promise<void> {
    if (fresh.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(settled),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    this.#awaited.clear();
    for (const socket of fresh) if (!this.#sockets.get(socket)?.served) socket.destroy();
  }

  /**
   * A connection that timed out with a response still being written (a client
   * that stopped reading) is reset, not closed: a FIN would queue behind the
   * unsent bytes and leave the kernel holding its send buffer — megabytes —
   * for as long as the peer keeps its window shut. An idle one (keep-alive
   * timeout) is closed politely, as node:http would.
   */
  #timedOut(connection: Socket | ServerHttp2Session): void {
    if (!(connection instanceof Socket)) {
      // an HTTP/2 session with no stream is sent GOAWAY; one whose streams stalled is torn down
      if ((this.#sessions.get(connection)?.streams ?? 0) === 0) connection.close();
      else connection.destroy();
      return;
    }
    const socket = connection;
    if ((this.#sockets.get(socket)?.active ?? 0) > 0 || socket.writableLength > 0) socket.resetAndDestroy();
    else socket.destroy();
  }

  /** Destroys what is left: the HTTP/1.1 connections and the HTTP/2 sessions (the shutdown's last phase). */
  destroyAll(): void {
    this.#front.closeAllConnections();
    for (const session of this.#sessions.keys()) session.destroy();
  }
}

/** NGHTTP2_CANCEL: the stream is no longer needed (RFC 9113 §7). */
const H2_CANCEL = 0x8;
