import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { type RunningSchedulers, startSchedulers } from '../../coordination/start.ts';
import { createError } from '../../errors/flotilla-error.ts';
import { serveMetrics } from '../../metrics/endpoint.ts';
import type { WireMetrics } from '../../metrics/protocol-metrics.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import { listen } from '../../utils/listen.ts';
import { SHUTDOWN_SIGNALS, trapShutdownSignals } from '../../utils/shutdown-signals.ts';
import type { TlsMaterial } from '../../utils/tls-files.ts';
import type { InFlight } from '../overload/in-flight.ts';
import type { ConnectionSource } from '../transport/connection-source.ts';
import { ConnectionTracker } from '../transport/connections.ts';
import { createFront, type Front } from '../transport/front.ts';
import type { ArrivalShedding, QueuedHandler } from '../transport/request-queue.ts';
import { runShutdown, type ShutdownHook } from './shutdown.ts';
import { runStartHooks, type StartHook } from './start-hooks.ts';

export interface LifecycleParts {
  config: ResolvedConfig;
  logger: Logger;
  /** The tracer schedulers get (the App's, which `setTracer` may swap before `listen`). */
  tracer(): Tracer;
  /** Where the setup runs, for the "listening" log line. */
  role: string;
  handler: QueuedHandler;
  /** The App's admission control (`overload.enabled`), which the request queue asks while it sheds. */
  admission: ArrivalShedding | undefined;
  /** The server's `upgrade` listener: upgrade requests through the same pipeline (src/app/websocket/websocket-route.ts). */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Resolves once no WebSocket is open: the shutdown waits for it with the requests in flight. */
  sockets: () => Promise<void>;
  /** Publishes to and from the other replicas (a standalone App with `coordination.url`): opened by `listen`, closed after the hooks. */
  replicas?: { start(): Promise<void>; close(): Promise<void> } | undefined;
  inFlight: InFlight;
  deadline: AbortController;
  /** Aborted when draining starts: long-lived responses (event streams) end then, before the hooks run. */
  drain: AbortController;
  hooks: readonly ShutdownHook[];
  schedulers: readonly Scheduler[];
  /** `beforeServe` hooks: run before the server binds. */
  startHooks: readonly StartHook[];
  registry: Registry;
  servesMetrics: boolean;
  handleSignals: boolean;
  /** Listen on a SO_REUSEPORT socket of this process's own (see `AppOptions.reusePort`). */
  reusePort: boolean;
  /** Bind nothing: serve the connections this source hands over (see `AppOptions.connections`). */
  source: ConnectionSource | undefined;
  /** The TLS certificate pair (`tls` in the config): its files read, and reloaded into the front. */
  tls?: TlsPart | undefined;
  /** Connections counted by protocol (an App with `tls` or `http2`). */
  wire?: WireMetrics | undefined;
  /** Called once the shutdown sequence is over: the App's own timers stop. */
  closed?: () => void;
}

/** What the lifecycle asks of the App's TLS certificates (see src/app/transport/tls-certificates.ts). */
export interface TlsPart {
  /** The pair the server starts with. */
  material(): TlsMaterial;
  /** From now on, a new pair goes to `front` (its new handshakes). */
  attach(front: Front): void;
  /** Stops watching the files. */
  close(): void;
}

type State = 'idle' | 'starting' | 'listening' | 'closing' | 'closed';
const noop = () => {};

/**
 * Serves what `source` hands over on `front`, which binds nothing: a connection is the server's
 * as if it had accepted it (its bytes read already come first), until the App has closed.
 */
function serve(front: Front, source: ConnectionSource, lifecycle: { readonly state: State }): { host: string; port: number } {
  // what node:http does on 'listening': it starts checking its connections' header and request timeouts
  front.started();
  source.open((socket, head) => {
    if (lifecycle.state === 'closed') return false;
    // what net.Server does to a connection it accepts, before its 'connection' event: node:http's
    // servers turn Nagle's algorithm off (without it, a response written in two parts waits for the
    // peer's delayed ACK: +40 ms at p99, a quarter less throughput on keep-alive connections)
    socket.setNoDelay(true);
    front.accept(socket, head);
    return true;
  });
  return source.address;
}

/** Listening, readiness, and the road to the shutdown sequence; one per App. It owns `draining`. */
export class Lifecycle {
  readonly #parts: LifecycleParts;
  readonly #ready = Promise.withResolvers<{ host: string; port: number }>();
  readonly #closed = Promise.withResolvers<void>();
  #state: State = 'idle';
  #closing: Promise<void> | undefined;
  #front: Front | undefined;
  #connections: ConnectionTracker | undefined;
  #metricsServer: Server | undefined;
  #shutdownStarted = 0;
  #untrap: (() => void) | undefined;
  #draining = false;
  #closingConnections = false;
  #running: RunningSchedulers | undefined;
  /** Aborts the `beforeServe` hooks when `close()` comes while they run. */
  readonly #starting = new AbortController();
  /** Port of the standalone metrics endpoint, once listening. */
  metricsPort: number | undefined;
  /** Whether the last shutdown completed in time with no failing hook. */
  clean = true;

  constructor(parts: LifecycleParts) {
    this.#parts = parts;
    this.#ready.promise.catch(() => {});
  }

  /** True from the start of the shutdown (but a retiring worker's, `stayReady`): `/health` answers 503. */
  get draining(): boolean {
    return this.#draining;
  }

  /** True from the start of any shutdown, a retiring worker's too: responses close their connection. */
  get closingConnections(): boolean {
    return this.#closingConnections;
  }

  get state(): State {
    return this.#state;
  }

  /** A scheduler's shutdown hook: through the coordination once started (`src/coordination/start.ts`), else its own `stop`. */
  stopScheduler(scheduler: Scheduler, signal: AbortSignal): Promise<void> | void {
    return this.#running === undefined ? scheduler.stop(signal) : this.#running.stop(scheduler, signal);
  }

  ready(): Promise<{ host: string; port: number }> {
    return this.#ready.promise;
  }

  async listen(): Promise<void> {
    if (this.#state !== 'idle') throw createError('FLO_ERR_LISTEN_TWICE', { state: this.#state });
    this.#state = 'starting';
    const { config, logger } = this.#parts;
    try {
      await runStartHooks(this.#parts.startHooks, this.#starting.signal);
      const { source, reusePort } = this.#parts;
      const front = createFront(config, this.#parts.tls?.material(), logger);
      this.#front = front;
      this.#parts.tls?.attach(front);
      this.#connections = new ConnectionTracker(front, this.#parts.handler, {
        // requests wait in a queue of ours, where admission control sees how long (see request-queue.ts)
        queued: config.overload.enabled,
        admission: this.#parts.admission,
        // a cluster worker accepting from the socket its primary shares (`balancing: kernel`) may be the last to close it
        ownQueue: reusePort || (this.#parts.role === 'worker' && source === undefined),
        until: source?.ended,
        upgrade: this.#parts.upgrade,
        streamTimeoutMs: config.timeouts.socketMs,
      });
      const wire = this.#parts.wire;
      if (wire !== undefined) {
        front.onConnection(() => wire.connection('h1'));
        front.onSession(() => wire.connection('h2'));
      }
      const address =
        source === undefined ? await listen(front.listener, config.port, config.host, { reusePort }) : serve(front, source, this);
      if (this.#parts.servesMetrics) {
        const registry = this.#parts.registry;
        const source = {
          collect: () => registry.metrics(),
          contentType: registry.contentType,
          onError: (err: unknown) => logger.error({ err }, 'metrics collection failed'),
        };
        const endpoint = await serveMetrics(source, config.metrics);
        this.#metricsServer = endpoint.server;
        this.metricsPort = endpoint.port;
      }
      const env = { logger, registry: this.#parts.registry, tracer: this.#parts.tracer() };
      this.#running = await startSchedulers(this.#parts.schedulers, env, config);
      await this.#parts.replicas?.start();
      if (this.#parts.handleSignals) this.#untrap = this.#trapSignals();
      this.#state = 'listening';
      logger.info({ address, role: this.#parts.role }, `${config.serviceName} listening`);
      this.#ready.resolve(address);
    } catch (error) {
      this.#ready.reject(error);
      this.#front?.close();
      this.#parts.tls?.close();
      this.#metricsServer?.close();
      this.#state = 'closed';
      throw error;
    }
    await this.#closed.promise;
  }

  close(deadline?: number, stayReady = false): Promise<void> {
    // a close() during startup lets the start finish (or fail), then shuts down: listen() and ready() always settle
    const settled = this.#state === 'starting' ? this.#ready.promise.then(noop, noop) : undefined;
    if (settled !== undefined) this.#starting.abort(new Error('the App is closing'));
    const shutdown = () => this.#shutdown(deadline, stayReady);
    this.#closing ??= settled === undefined ? shutdown() : settled.then(shutdown);
    return this.#closing;
  }

  /**
   * The sequence, within `shutdown.timeoutMs` or until `deadline` (epoch ms), whichever ends first.
   * `stayReady`: no health 503 and no drain delay (others go on serving: see `App.close`).
   */
  async #shutdown(deadline: number | undefined, stayReady: boolean): Promise<void> {
    this.#state = 'closing';
    this.#shutdownStarted = performance.now();
    const { config, logger } = this.#parts;
    const budgetMs = Math.min(config.shutdown.timeoutMs, deadline === undefined ? Infinity : Math.max(0, deadline - Date.now()));
    this.clean = await runShutdown({
      logger,
      front: this.#front,
      connections: this.#connections,
      inFlight: this.#parts.inFlight,
      sockets: this.#parts.sockets,
      hooks: this.#parts.hooks,
      deadline: this.#parts.deadline,
      budgetMs,
      drainDelayMs: stayReady ? 0 : config.shutdown.drainDelayMs,
      startDraining: () => {
        this.#draining = !stayReady;
        // keep-alive clients learn to leave with their next response, whoever else goes on serving
        this.#closingConnections = true;
        // a retiring worker's event streams end too, and its WebSockets close with 1001: their clients
        // reconnect to the processes that stay
        this.#parts.drain.abort();
      },
    });
    await this.#parts.replicas?.close().catch((err: unknown) => logger.warn({ err }, 'closing the topics coordinator failed'));
    this.#parts.tls?.close();
    this.#parts.closed?.();
    if (this.#metricsServer !== undefined) {
      this.#metricsServer.close();
      this.#metricsServer.closeAllConnections();
    }
    this.#untrap?.();
    this.#state = 'closed';
    this.#closed.resolve();
  }

  /** First SIGINT/SIGTERM: graceful shutdown, then the process exits by the deadline at the latest. Second: exit at once. */
  #trapSignals(): () => void {
    const { logger, config } = this.#parts;
    // the handlers stay while closing, so that a second signal still exits at once; close() drops them after
    return trapShutdownSignals({
      first: (signal) => {
        logger.info({ signal }, 'signal received: shutting down');
        this.close().then(() => {
          const left = config.shutdown.timeoutMs - (performance.now() - this.#shutdownStarted);
          process.exitCode = this.clean ? 0 : 1;
          setTimeout(() => process.exit(), Math.max(left, 100)).unref();
        });
      },
      again: (signal) => {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(128 + SHUTDOWN_SIGNALS[signal]);
      },
    });
  }
}
