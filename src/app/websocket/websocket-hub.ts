import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TopicPayload } from '../../coordination/replica-topics.ts';
import type { WebSocketMetrics } from '../../metrics/websocket-metrics.ts';
import type { SocketTopics } from '../core/ctx.ts';
import { checkTopic } from './websocket-topic.ts';

/** The `websockets` section of the config, as the hub reads it. */
export interface WebSocketLimits {
  readonly maxMessageBytes: number;
  readonly maxConnections: number;
  readonly pingIntervalMs: number;
  readonly maxBufferedBytes: number;
  readonly closeTimeoutMs: number;
}

/** Close codes the server sends (RFC 6455 §7.4.1, and the registry's 1012/1013). */
export const CLOSE = {
  goingAway: 1001,
  internalError: 1011,
  tryAgainLater: 1013,
} as const;

/** One open socket as the hub keeps it. */
interface Open {
  readonly socket: WebSocket;
  readonly route: string;
  readonly requestId: string;
  readonly logger: Logger;
  readonly opened: number;
  readonly topics: Set<string>;
  alive: boolean;
  messagesIn: number;
  messagesOut: number;
  /** Terminates the socket if its closing handshake has not finished in time. */
  terminator: NodeJS.Timeout | undefined;
}

/** `ws` is loaded when the first socket is about to open: a service without websocket routes never loads it. */
const requireWs = createRequire(import.meta.url);

/**
 * The App's open WebSockets: the handshake (through `ws`, with `websockets.maxMessageBytes` as its
 * `maxPayload`: a larger message closes its socket with 1009), the cap per process, the ping/pong
 * keepalive that terminates dead peers, topics and their delivery (a socket whose unsent bytes pass
 * `websockets.maxBufferedBytes` is closed with 1013 instead of buffering more), one log line per
 * closed socket, and the drain: every socket closed with 1001 when the App starts draining, those
 * whose closing handshake does not finish within `closeTimeoutMs` (or by the deadline) terminated.
 *
 * @example
 * const hub = new WebSocketHub(config.websockets, logger, metrics);
 * hub.watch(drainSignal, deadlineSignal);
 * hub.open(req, socket, head, { route: ctx.route, requestId: ctx.requestId, logger: ctx.logger }, (ws, topics) => route.websocket(ws, ctx));
 */
export class WebSocketHub {
  readonly #limits: WebSocketLimits;
  readonly #logger: Logger;
  readonly #metrics: WebSocketMetrics | undefined;
  readonly #open = new Map<WebSocket, Open>();
  readonly #topics = new Map<string, Set<Open>>();
  #server: WebSocketServer | undefined;
  #pinger: NodeJS.Timeout | undefined;
  #draining = false;
  #idle: (() => void)[] = [];
  /** Sockets opened and closed, messages in and deliveries: a cluster worker pushes its metrics when it moved. */
  activity = 0;

  constructor(limits: WebSocketLimits, logger: Logger, metrics: WebSocketMetrics | undefined) {
    this.#limits = limits;
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** Sockets open now. */
  get count(): number {
    return this.#open.size;
  }

  /** No new socket: the App is draining. */
  get draining(): boolean {
    return this.#draining;
  }

  /** The cap (`websockets.maxConnections`) is reached. */
  get full(): boolean {
    return this.#open.size >= this.#limits.maxConnections;
  }

  /** Starts the drain when `drain` aborts; terminates what is left when `deadline` does. */
  watch(drain: AbortSignal, deadline: AbortSignal): void {
    drain.addEventListener('abort', () => this.drain(), { once: true });
    deadline.addEventListener('abort', () => this.#terminateAll(), { once: true });
  }

  /**
   * Completes the handshake of an upgrade request the pipeline let through; `opened` receives the
   * socket (the route's `websocket` function) once the 101 is written. Returns false when `ws`
   * refused it (it then answered the client itself, or the socket was gone).
   */
  open(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    who: { route: string; requestId: string; logger: Logger },
    opened: (socket: WebSocket, topics: SocketTopics) => void,
  ): boolean {
    let accepted = false;
    this.#wss().handleUpgrade(req, socket, head, (ws) => {
      accepted = true;
      const open: Open = {
        socket: ws,
        route: who.route,
        requestId: who.requestId,
        logger: who.logger,
        opened: performance.now(),
        topics: new Set(),
        alive: true,
        messagesIn: 0,
        messagesOut: 0,
        terminator: undefined,
      };
      this.#open.set(ws, open);
      this.activity++;
      this.#metrics?.connections.inc();
      ws.on('pong', () => {
        open.alive = true;
      });
      ws.on('message', () => {
        this.activity++;
        open.messagesIn++;
        this.#metrics?.messagesIn.inc();
      });
      ws.on('error', (error) => open.logger.debug({ err: error, route: open.route }, 'websocket error'));
      ws.once('close', (code) => this.#closed(open, code));
      this.#keepAlive();
      opened(ws, {
        subscribe: (topic) => this.#subscribe(open, checkTopic(topic)),
        unsubscribe: (topic) => this.#unsubscribe(open, checkTopic(topic)),
      });
    });
    return accepted;
  }

  /** Sends a published message to every socket of this process subscribed to `topic`. */
  deliver(topic: string, payload: TopicPayload): void {
    const subscribers = this.#topics.get(topic);
    if (subscribers === undefined) return;
    this.activity++;
    const binary = typeof payload !== 'string';
    let sent = 0;
    for (const open of subscribers) {
      const { socket } = open;
      if (socket.readyState !== 1) continue;
      if (socket.bufferedAmount > this.#limits.maxBufferedBytes) {
        this.#slowConsumer(open);
        continue;
      }
      socket.send(payload, { binary });
      open.messagesOut++;
      sent++;
    }
    if (sent > 0) this.#metrics?.messagesOut.inc(sent);
  }

  /** Closes every socket with 1001; one whose closing handshake is not done in `closeTimeoutMs` is terminated. */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    for (const open of this.#open.values()) this.#close(open, CLOSE.goingAway, 'server going away');
  }

  /** Resolves once no socket is open (the shutdown waits for it with the requests in flight). */
  idle(): Promise<void> {
    return this.#open.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  #wss(): WebSocketServer {
    if (this.#server !== undefined) return this.#server;
    const { WebSocketServer: Server } = requireWs('ws') as typeof import('ws');
    this.#server = new Server({
      noServer: true,
      clientTracking: false,
      maxPayload: this.#limits.maxMessageBytes,
      perMessageDeflate: false,
      // the pipeline chose the subprotocol already (see websocket-route.ts): it is the only one offered then
      handleProtocols: (_offered, req) => chosenProtocol.get(req) ?? false,
    });
    return this.#server;
  }

  #subscribe(open: Open, topic: string): void {
    if (open.socket.readyState > 1 || open.topics.has(topic)) return;
    open.topics.add(topic);
    let subscribers = this.#topics.get(topic);
    if (subscribers === undefined) {
      subscribers = new Set();
      this.#topics.set(topic, subscribers);
    }
    subscribers.add(open);
  }

  #unsubscribe(open: Open, topic: string): void {
    if (!open.topics.delete(topic)) return;
    const subscribers = this.#topics.get(topic);
    subscribers?.delete(open);
    if (subscribers?.size === 0) this.#topics.delete(topic);
  }

  /** A reader that does not keep up: 1013, and no more data queued for it. */
  #slowConsumer(open: Open): void {
    open.logger.warn(
      { route: open.route, bufferedBytes: open.socket.bufferedAmount, maxBufferedBytes: this.#limits.maxBufferedBytes },
      'websocket closed: slow consumer',
    );
    this.#metrics?.slowConsumers.inc();
    this.#close(open, CLOSE.tryAgainLater, 'slow consumer');
    // its close frame queues behind the data it does not read: nothing more is sent to it
    for (const topic of [...open.topics]) this.#unsubscribe(open, topic);
  }

  /** A close started by the server: the closing handshake, then termination after `closeTimeoutMs`. */
  #close(open: Open, code: number, reason: string): void {
    if (open.terminator !== undefined) return;
    open.socket.close(code, reason);
    open.terminator = setTimeout(() => open.socket.terminate(), this.#limits.closeTimeoutMs);
    open.terminator.unref();
  }

  #terminateAll(): void {
    for (const open of this.#open.values()) open.socket.terminate();
  }

  #closed(open: Open, code: number): void {
    clearTimeout(open.terminator);
    this.#open.delete(open.socket);
    this.activity++;
    for (const topic of [...open.topics]) this.#unsubscribe(open, topic);
    this.#metrics?.connections.dec();
    const durationMs = Math.round(performance.now() - open.opened);
    open.logger.info(
      { route: open.route, code, durationMs, messagesIn: open.messagesIn, messagesOut: open.messagesOut },
      'websocket closed',
    );
    if (this.#open.size === 0) {
      clearInterval(this.#pinger);
      this.#pinger = undefined;
      for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /**
   * One timer for every socket, running only while one is open: a socket that has not answered the
   * previous ping is terminated, the others pinged again.
   */
  #keepAlive(): void {
    const every = this.#limits.pingIntervalMs;
    if (every === 0 || this.#pinger !== undefined) return;
    this.#pinger = setInterval(() => {
      for (const open of this.#open.values()) {
        if (!open.alive) {
          open.logger.info({ route: open.route }, 'websocket terminated: no pong to the last ping');
          open.socket.terminate();
          continue;
        }
        open.alive = false;
        open.socket.ping();
      }
    }, every);
    this.#pinger.unref();
  }
}

/** The subprotocol the route chose for an upgrade request, what `ws`'s `handleProtocols` answers. */
const chosenProtocol = new WeakMap<IncomingMessage, string>();

/** Records `protocol` as the one the upgrade of `req` selects (`Sec-WebSocket-Protocol` of the 101). */
export function chooseProtocol(req: IncomingMessage, protocol: string): void {
  chosenProtocol.set(req, protocol);
}
