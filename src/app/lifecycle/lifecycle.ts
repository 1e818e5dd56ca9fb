import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { createError } from '../../errors/flotilla-error.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { InFlight } from '../overload/in-flight.ts';
import type { ConnectionTracker } from '../transport/connections.ts';
import type { Front } from '../transport/front.ts';
import { type BindingParts, bind, type TlsPart } from './binding.ts';
import { openMetricsEndpoint } from './metrics-endpoint.ts';
import type { StartedSchedulers, StartSchedulers } from './schedulers.ts';
import { runShutdown, type ShutdownHook } from './shutdown.ts';
import { trapAppSignals } from './signals.ts';
import { runStartHooks, type StartHook } from './start-hooks.ts';

/** What the App hands its lifecycle, grouped by the phase that reads it. */
export interface LifecycleParts {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  /** Where the setup runs, for the "listening" log line. */
  readonly role: string;
  /** What serves the App's port (binding.ts). */
  readonly binding: BindingParts;
  /** The TLS certificate pair (`tls` in the config): its files read, and reloaded into the front. */
  readonly tls?: TlsPart | undefined;
  /** What runs around the binding, before and after it. */
  readonly start: StartParts;
  /** What the shutdown sequence ends, waits for and runs (shutdown.ts). */
  readonly shutdown: ShutdownParts;
  /** The registry a metrics endpoint of the App's own serves (metrics-endpoint.ts), or none. */
  readonly metricsEndpoint: Registry | undefined;
  /** Trap SIGINT and SIGTERM (signals.ts). */
  readonly handleSignals: boolean;
  /** Publishes to and from the other replicas (a standalone App with `coordination.url`): opened by `listen`, closed after the hooks. */
  readonly replicas?: { start(): Promise<void>; close(): Promise<void> } | undefined;
}

/** What `listen` runs besides binding: the `beforeServe` hooks before it, the schedulers once bound. */
export interface StartParts {
  /** `beforeServe` hooks: run before the server binds. */
  readonly hooks: readonly StartHook[];
  /** Starts the schedulers once the server listens (schedulers.ts). */
  readonly schedulers: StartSchedulers;
}

/** What the App's shutdown sequence ends, waits for and runs. */
export interface ShutdownParts {
  readonly inFlight: InFlight;
  readonly deadline: AbortController;
  /** Aborted when draining starts: long-lived responses (event streams) end then, before the hooks run. */
  readonly drain: AbortController;
  readonly hooks: readonly ShutdownHook[];
  /** Resolves once no WebSocket is open: the shutdown waits for it with the requests in flight. */
  readonly sockets: () => Promise<void>;
  /** Called once the shutdown sequence is over: the App's own timers stop. */
  readonly closed?: () => void;
}

type State = 'idle' | 'starting' | 'listening' | 'closing' | 'closed';
const noop = () => {};

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
  #running: StartedSchedulers | undefined;
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

  /** A scheduler's shutdown hook: through what started it once started (`StartSchedulers`), else its own `stop`. */
  stopScheduler(scheduler: Scheduler, signal: AbortSignal): Promise<void> | void {
    return this.#running === undefined ? scheduler.stop(signal) : this.#running.stop(scheduler, signal);
  }

  ready(): Promise<{ host: string; port: number }> {
    return this.#ready.promise;
  }

  async listen(): Promise<void> {
    if (this.#state !== 'idle') throw createError('FLO_ERR_LISTEN_TWICE', { state: this.#state });
    this.#state = 'starting';
    const { config, logger, role, tls } = this.#parts;
    try {
      await runStartHooks(this.#parts.start.hooks, this.#starting.signal);
      const { front, connections, address } = await bind(config, logger, role, this.#parts.binding, tls, this);
      this.#front = front;
      this.#connections = connections;
      const registry = this.#parts.metricsEndpoint;
      if (registry !== undefined) {
        const endpoint = await openMetricsEndpoint(registry, config.metrics, logger);
        this.#metricsServer = endpoint.server;
        this.metricsPort = endpoint.port;
      }
      this.#running = await this.#parts.start.schedulers();
      await this.#parts.replicas?.start();
      if (this.#parts.handleSignals) this.#untrap = this.#trapSignals();
      this.#state = 'listening';
      logger.info({ address, role }, `${config.serviceName} listening`);
      this.#ready.resolve(address);
    } catch (error) {
      this.#ready.reject(error);
      this.#front?.close();
      tls?.close();
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
   * The sequence (shutdown.ts), within `shutdown.timeoutMs` or until `deadline` (epoch ms), whichever ends first.
   * `stayReady`: no health 503 and no drain delay (others go on serving: see `App.close`).
   */
  async #shutdown(deadline: number | undefined, stayReady: boolean): Promise<void> {
    this.#state = 'closing';
    this.#shutdownStarted = performance.now();
    const { config, logger } = this.#parts;
    const parts = this.#parts.shutdown;
    const budgetMs = Math.min(config.shutdown.timeoutMs, deadline === undefined ? Infinity : Math.max(0, deadline - Date.now()));
    this.clean = await runShutdown({
      logger,
      front: this.#front,
      connections: this.#connections,
      inFlight: parts.inFlight,
      sockets: parts.sockets,
      hooks: parts.hooks,
      deadline: parts.deadline,
      budgetMs,
      drainDelayMs: stayReady ? 0 : config.shutdown.drainDelayMs,
      startDraining: () => {
        this.#draining = !stayReady;
        // keep-alive clients learn to leave with their next response, whoever else goes on serving
        this.#closingConnections = true;
        // a retiring worker's event streams end too, and its WebSockets close with 1001: their clients
        // reconnect to the processes that stay
        parts.drain.abort();
      },
    });
    await this.#parts.replicas?.close().catch((err: unknown) => logger.warn({ err }, 'closing the topics coordinator failed'));
    this.#parts.tls?.close();
    parts.closed?.();
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
    const lifecycle = this;
    return trapAppSignals(logger, {
      close: () => this.close(),
      get clean() {
        return lifecycle.clean;
      },
      budgetLeftMs: () => config.shutdown.timeoutMs - (performance.now() - this.#shutdownStarted),
    });
  }
}
