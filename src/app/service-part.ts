import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { type Settings, settingsOf } from '../config/settings.ts';
import type { ResolvedConfig } from '../config/types.ts';
import type { TopicPayload } from '../coordination/replica-topics.ts';
import { type RunningSchedulers, startSchedulers } from '../coordination/start.ts';
import { createError, describeValue } from '../errors/flotilla-error.ts';
import { Registry } from '../metrics/prom-client.ts';
import { publishCounter } from '../metrics/websocket-metrics.ts';
import { runScheduledJob } from '../scheduler/run-scheduled.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { Group, groupArgs } from './core/group.ts';
import type { Controller, GroupArgs, HealthChecker, Module, Registrar } from './core/registrar.ts';
import type { ErrorHandler, NotFoundHandler, RequestHook, Route } from './core/route.ts';
import { runShutdown, type ShutdownHook } from './lifecycle/shutdown.ts';
import { checkStartHook, runStartHooks, type StartHook } from './lifecycle/start-hooks.ts';
import { GlobalTracer } from './observability/global-tracer.ts';
import { createLogger } from './observability/logger.ts';
import { InFlight } from './overload/in-flight.ts';
import type { StaticOptions } from './static/static-options.ts';
import { publishedPayload } from './websocket/topic-transport.ts';

/**
 * What the service's setup is given in the cluster's primary (in its service
 * thread, `src/primary/service-thread.ts`), with `role === 'primary'`: the registration
 * API of an App, of which only schedulers, `beforeServe` hooks and shutdown hooks take effect.
 * Routes, controllers, groups and health checkers are accepted and dropped:
 * the workers serve them. No router, validators or docs are built here.
 *
 * `prepare()` runs the `beforeServe` hooks (the primary forks its workers once it resolves);
 * `start()` binds and starts the schedulers (across replicas with `coordination.url`:
 * `src/coordination/start.ts`); `close(deadline)` runs the hooks
 * (the schedulers' stops among them, in registration order) with one signal
 * that aborts at the deadline, as a worker's shutdown does.
 *
 * @example
 * const part = new ServicePart(config);
 * await setup(part as unknown as App);
 * await part.prepare(); await part.start(); … await part.close(Date.now() + 10_000);
 */
export class ServicePart implements Registrar {
  readonly role = 'primary' as const;
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly registry = new Registry();
  /** Routes never land here; the App's `routes` is always empty in the primary. */
  readonly routes: readonly Route[] = [];
  readonly #hooks: ShutdownHook[] = [];
  readonly #schedulers: Scheduler[] = [];
  readonly #startHooks: StartHook[] = [];
  /** Aborts the `beforeServe` hooks when the shutdown comes while they run. */
  readonly #preparing = new AbortController();
  #prepared: Promise<void> | undefined;
  readonly #deadline = new AbortController();
  #tracer: Tracer;
  #running: RunningSchedulers | undefined;
  #started: Promise<void> | undefined;
  #clean = true;

  readonly #publish: (topic: string, payload: TopicPayload) => void;
  #publishes: ((topic: string) => void) | undefined;

  /**
   * `publish`: where `app.publish` sends (the service thread posts it to the primary, which hands it to the workers);
   * `logger`: the service's own (`defineService({ logger })`), the bindings added as its child.
   */
  constructor(
    config: ResolvedConfig,
    logBindings: Record<string, unknown> = {},
    publish: (topic: string, payload: TopicPayload) => void = () => {},
    logger?: Logger,
  ) {
    this.#publish = publish;
    this.config = config;
    this.logger = createLogger(config, undefined, logBindings, logger);
    this.#tracer = new GlobalTracer(config.serviceName);
  }

  get settings(): Settings {
    return settingsOf(this, this.config);
  }

  get tracer(): Tracer {
    return this.#tracer;
  }

  /** Whether the last `close` ran every hook in time without a failure. */
  get cleanShutdown(): boolean {
    return this.#clean;
  }

  registerController(_controller: Controller): void {}

  use(module: Module): void {
    module.register(this);
  }

  group(prefix: string, ...args: GroupArgs): Group {
    const { options, middlewares } = groupArgs(prefix, args);
    return new Group(this, () => {}, prefix, middlewares, [], options.security, { option: options.rateLimit });
  }

  registerHealthChecker(_checker: HealthChecker): void {}

  /** To every worker's sockets subscribed to `topic` (and every replica's, with `coordination.url`): see `App.publish`. */
  publish(topic: string, data: unknown): void {
    const payload = publishedPayload(topic, data, this.config.websockets.maxMessageBytes);
    if (this.config.metrics.enabled) {
      this.#publishes ??= publishCounter(this.registry, this.config.websockets.metricTopics);
      this.#publishes(topic);
    }
    this.#publish(topic, payload);
  }

  /** No request reaches the primary: its hooks and handlers are dropped, like its routes. */
  onRequest(_hook: RequestHook): void {}

  setErrorHandler(_handler: ErrorHandler): void {}

  setNotFoundHandler(_handler: NotFoundHandler): void {}

  /** The workers serve the files; nothing is checked or loaded here. */
  serveStatic(_prefix: string, _dir: string, _options?: StaticOptions): void {}

  /** Nothing to run in the primary: no scheduler and no shutdown hook (the service thread then ends). */
  get idle(): boolean {
    return this.#schedulers.length === 0 && this.#hooks.length === 0;
  }

  registerScheduler(scheduler: Scheduler): void {
    this.#schedulers.push(scheduler);
    this.onShutdown((signal) => (this.#running === undefined ? scheduler.stop(signal) : this.#running.stop(scheduler, signal)));
  }

  /** The registered job `name`, run once, now, here in the service thread: see `App.runScheduled`. */
  runScheduled(name: string): Promise<void> {
    return runScheduledJob(this.#schedulers, name);
  }

  onShutdown(hook: ShutdownHook): void {
    if (typeof hook !== 'function') throw createError('FLO_ERR_BAD_HOOK', { owner: 'onShutdown', got: describeValue(hook) });
    this.#hooks.push(hook);
  }

  beforeServe(hook: StartHook): void {
    checkStartHook(hook);
    this.#startHooks.push(hook);
  }

  /** Runs the `beforeServe` hooks, once; rejects with the first hook's failure, or when the shutdown aborts them. */
  prepare(): Promise<void> {
    this.#prepared ??= (async () => {
      if (this.#startHooks.length === 0) return;
      const started = performance.now();
      await runStartHooks(this.#startHooks, this.#preparing.signal);
      this.logger.info({ hooks: this.#startHooks.length, ms: Math.round(performance.now() - started) }, 'beforeServe hooks done');
    })();
    return this.#prepared;
  }

  setTracer(tracer: Tracer): void {
    this.#tracer = tracer;
  }

  /** Request metrics, translations and sessions concern the workers: accepted, unused here. */
  setMetricsCollector(_collector: unknown): void {}

  setTranslator(_translator: unknown): void {}

  setSessionStore(_store: unknown): void {}

  start(): Promise<void> {
    this.#started ??= (async () => {
      const env = { logger: this.logger, registry: this.registry, tracer: this.#tracer };
      this.#running = await startSchedulers(this.#schedulers, env, this.config);
      this.logger.info({ schedulers: this.#schedulers.length }, 'primary part of the service started');
    })();
    return this.#started;
  }

  /**
   * Runs the shutdown hooks in registration order, by `deadline` (epoch ms) at the latest. A start still
   * under way (waiting for the coordinator) is let finish first, so that the hooks stop what it started.
   */
  async close(deadline: number): Promise<void> {
    this.#preparing.abort(new Error('the cluster is shutting down'));
    await this.#prepared?.catch(() => {});
    await this.#started?.catch(() => {});
    this.#clean = await runShutdown({
      logger: this.logger,
      front: undefined,
      connections: undefined,
      inFlight: new InFlight(),
      hooks: this.#hooks,
      deadline: this.#deadline,
      budgetMs: Math.min(this.config.shutdown.timeoutMs, Math.max(0, deadline - Date.now())),
      drainDelayMs: 0,
      startDraining: () => {},
    });
  }
}
