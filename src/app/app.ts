import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import type FindMyWay from 'find-my-way';
import type { InjectOptions, Response as InjectResponse } from 'light-my-request';
import type { Logger } from 'pino';
import { type Counter, Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { checkSecurity } from '../config/security-requirements.ts';
import { type Settings, settingsOf } from '../config/settings.ts';
import type { KConfig, ResolvedConfig } from '../config/types.ts';
import { resolveConfig } from '../config/validate.ts';
import type { CounterStore } from '../coordination/counter-store.ts';
import { ReplicaTopics, type TopicTransport } from '../coordination/replica-topics.ts';
import type { SessionStore } from '../coordination/session-store.ts';
import { openSessionStore } from '../coordination/session-stores.ts';
import { startSchedulers } from '../coordination/start.ts';
import { createError, describeValue } from '../errors/flotilla-error.ts';
import { CatalogTranslator } from '../i18n/catalog-translator.ts';
import type { Translator } from '../i18n/translator.ts';
import type { MetricsCollector } from '../metrics/metrics-collector.ts';
import { registerProcessMetrics } from '../metrics/process-metrics.ts';
import { PromMetricsCollector } from '../metrics/prom-collector.ts';
import { WireMetrics } from '../metrics/protocol-metrics.ts';
import { shedCounter } from '../metrics/shed-metrics.ts';
import { publishCounter } from '../metrics/websocket-metrics.ts';
import { runScheduledJob } from '../scheduler/run-scheduled.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { type AppConfig, type AppOptions, splitRateLimitKey } from './app-options.ts';
import { attachSocket } from './core/ctx.ts';
import { type AddRoute, Group, groupArgs } from './core/group.ts';
import { checkHook, type HookChain, type Seams } from './core/hooks.ts';
import { createRequestHandler, type PipelineHost } from './core/pipeline.ts';
import { type RateLimitPolicy, rateLimitPolicy } from './core/rate-limit-policy.ts';
import type { AppRole, Controller, GroupArgs, HealthChecker, Module, Registrar } from './core/registrar.ts';
import { type ErrorHandler, joinPath, type Middleware, type NotFoundHandler, type RequestHook, type Route } from './core/route.ts';
import type { DocumentedRoute } from './core/route-schemas.ts';
import { type RouteRegistration, Router } from './core/router.ts';
import { healthRoute } from './health/health.ts';
import { Lifecycle } from './lifecycle/lifecycle.ts';
import type { ShutdownHook } from './lifecycle/shutdown.ts';
import { checkStartHook, noteStartHooks, type StartHook } from './lifecycle/start-hooks.ts';
import { GlobalTracer } from './observability/global-tracer.ts';
import { createLogger } from './observability/logger.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi/openapi.ts';
import { docsRoutes } from './openapi/swagger-ui.ts';
import type { Admission } from './overload/admission.ts';
import { appAdmission } from './overload/app-admission.ts';
import { InFlight, type RequestRoutes } from './overload/in-flight.ts';
import { appPipelineHost } from './pipeline-host.ts';
import { appLimits } from './rate-limit/app-limits.ts';
import { type LimiterHost, routeLimit } from './rate-limit/limiter.ts';
import { staticRoutes } from './static/serve-static.ts';
import type { StaticOptions } from './static/static-options.ts';
import type { InjectWebSocketOptions } from './transport/inject-websocket.ts';
import { TlsCertificates } from './transport/tls-certificates.ts';
import type { GroupOf } from './typed/typed-group.ts';
import { appHub } from './websocket/app-hub.ts';
import { localTopics, publishedPayload } from './websocket/topic-transport.ts';
import type { WebSocketHub } from './websocket/websocket-hub.ts';
import { upgradeListener, webSocketHandler } from './websocket/websocket-route.ts';

export type { AppConfig, AppOptions } from './app-options.ts';
export type { AppRole } from './core/registrar.ts';

/**
 * The application: request logging, CORS, recovery, the error handler,
 * `GET /health` and the docs routes are set up by the constructor, in this
 * order. In a cluster, each worker runs one, and so does the primary's service
 * thread (`role`); a test makes one and calls `inject`.
 *
 * @example
 * const app = new App({ serviceName: 'books', port: 3000 });
 * app.registerController(new BooksController(repo));
 * app.onShutdown(async (signal) => pool.end());
 * await app.listen(); // resolves after SIGTERM/SIGINT or app.close() and the graceful shutdown
 */
export class App implements Registrar {
  readonly config: ResolvedConfig;
  readonly role: AppRole;
  readonly logger: Logger;
  readonly #router: Router;
  readonly #inFlight = new InFlight();
  readonly #deadline = new AbortController();
  /** Every open event stream waits on it: no listener limit (see sse.ts, which removes its own). */
  readonly #drain = withoutListenerLimit(new AbortController());
  readonly #hooks: ShutdownHook[] = [];
  readonly #schedulers: Scheduler[] = [];
  readonly #checkers: HealthChecker[] = [];
  readonly #requestHooks: RequestHook[] = [];
  readonly #seams: Seams = {};
  readonly #registry: Registry;
  readonly #admission: Admission | undefined;
  readonly #shed: Counter<'reason'> | undefined;
  readonly #handler: ReturnType<typeof createRequestHandler>;
  readonly #lifecycle: Lifecycle;
  readonly #tls: TlsCertificates | undefined;
  #wire: WireMetrics | undefined;
  /** The request pipeline's host: `setMetricsCollector`, `setTracer` and `setTranslator` write into it. */
  readonly #host: PipelineHost;
  readonly #runSchedulers: boolean;
  readonly #startHooks: StartHook[] = [];
  #openapi: { version: string; document: OpenApiDocument } | undefined;
  /** The App's own rate limit (`rateLimit` of the config): every route's unless its group or itself sets one. */
  readonly #rateLimit: RateLimitPolicy | false | undefined;
  /** What the rate-limited routes share; made with the first one (a service without limits has no store). */
  #limits: LimiterHost | undefined;
  readonly #counterStore: CounterStore | undefined;
  /** The sessions' store: the one given, or the config's once a request asks for its session. */
  #sessionStore: SessionStore | undefined;
  /** The open WebSockets; made with the first websocket route. */
  #hub: WebSocketHub | undefined;
  readonly #topics: TopicTransport;
  #publishes: ((topic: string) => void) | undefined;
  #published = 0;

  constructor(config?: KConfig | AppConfig, options: AppOptions = {}) {
    const { plain, key } = splitRateLimitKey(config);
    this.config = resolveConfig(plain ?? {});
    this.#counterStore = options.counterStore;
    this.#sessionStore = options.sessionStore;
    const own = this.config.rateLimit;
    this.#rateLimit = rateLimitPolicy(
      own === undefined ? undefined : { ...own, ...(key === undefined ? {} : { key }) },
      'default',
      'the App',
    );
    this.role = options.role ?? 'standalone';
    this.logger = createLogger(this.config, options.logStream, options.logBindings);
    const { limits, timeouts, overload } = this.config;
    this.#router = new Router({
      maxParamLength: limits.paramLength,
      bodyLimit: limits.bodyBytes,
      handlerMs: timeouts.handlerMs,
      limiter: (policy, route) => {
        this.#limits ??= appLimits({ config: this.config, logger: this.logger, registry: this.#registry, store: this.#counterStore });
        return routeLimit(policy, route, this.#limits);
      },
    });
    this.#registry = new Registry();
    const serveMetrics = options.serveMetrics ?? config?.metrics !== undefined;
    if (options.processMetrics ?? serveMetrics) registerProcessMetrics(this.#registry);
    // the request metrics first: the registry's exposition keeps registration order
    const metrics = this.config.metrics.enabled ? new PromMetricsCollector(this.#registry) : undefined;
    if (this.config.metrics.enabled) {
      this.#shed = shedCounter(this.#registry, ['overload', 'client-gone', 'handler-timeout']);
    }
    if (overload.enabled) this.#admission = appAdmission(this.config, this.logger, this.#registry);
    // requests and connections by protocol: only where there is more than plain HTTP/1.1 to tell apart
    if (this.config.tls !== undefined || this.config.http2)
      this.#wire = new WireMetrics(this.config.metrics.enabled ? this.#registry : undefined, this.config.tls !== undefined);
    this.#runSchedulers = options.runSchedulers ?? true;
    const { i18n } = this.config;
    this.#host = appPipelineHost({
      config: this.config,
      logger: this.logger,
      router: this.#router,
      inFlight: this.#inFlight,
      drain: this.#drain.signal,
      deadline: this.#deadline.signal,
      requestHooks: this.#requestHooks,
      seams: this.#seams,
      wire: this.#wire,
      admission: this.#admission,
      shed: this.#shed,
      sessionStore: () => {
        this.#sessionStore ??= openSessionStore(this.config, this.logger);
        return this.#sessionStore;
      },
      closingConnections: () => this.#lifecycle.closingConnections,
      metrics,
      tracer: new GlobalTracer(this.config.serviceName),
      translator: i18n === undefined ? undefined : CatalogTranslator.fromDirectory(i18n.directory, i18n.defaultLocale),
    });
    this.#handler = createRequestHandler(this.#host);
    // a standalone App with coordination.url reaches the other replicas itself; a cluster worker's go through its primary
    const replicas =
      options.topics === undefined && this.role === 'standalone' && this.config.coordination.url !== undefined
        ? new ReplicaTopics(this.config, this.logger)
        : undefined;
    this.#topics = options.topics ?? replicas ?? localTopics();
    this.#topics.open((topic, payload) => this.#hub?.deliver(topic, payload));
    const tls = this.config.tls;
    // a cluster worker's pair comes from its primary, which watches the files and exports their expiry once
    const watchCertificates = options.watchCertificates ?? true;
    this.#tls =
      tls === undefined
        ? undefined
        : new TlsCertificates(tls, this.logger, { watch: watchCertificates, registry: watchCertificates ? this.#registry : undefined });
    this.#lifecycle = new Lifecycle({
      config: this.config,
      logger: this.logger,
      role: this.role,
      binding: {
        handler: this.#handler,
        admission: this.#admission,
        upgrade: upgradeListener(this.#handler),
        reusePort: options.reusePort ?? false,
        source: options.connections,
        wire: this.#wire,
      },
      tls: this.#tls,
      start: {
        hooks: this.#startHooks,
        // the tracer is read once the App binds: `setTracer` may swap it before `listen`
        schedulers: () =>
          startSchedulers(this.#schedulers, { logger: this.logger, registry: this.#registry, tracer: this.#host.tracer }, this.config),
      },
      shutdown: {
        inFlight: this.#inFlight,
        deadline: this.#deadline,
        drain: this.#drain,
        hooks: this.#hooks,
        sockets: () => this.#hub?.idle() ?? Promise.resolve(),
        // the App has closed: no timer of its own may outlive it
        closed: () => {
          this.#admission?.stop();
          this.#host.timeouts.stop();
          this.#limits?.store.close().catch((error: unknown) => this.logger.warn({ err: error }, 'closing the rate-limit store failed'));
          this.#sessionStore?.close().catch((error: unknown) => this.logger.warn({ err: error }, 'closing the session store failed'));
        },
      },
      metricsEndpoint: serveMetrics ? this.#registry : undefined,
      handleSignals: options.handleSignals ?? true,
      replicas,
    });
    const { docs } = this.config;
    // the built-in routes run no onRequest hook: an App-wide auth check must not lock probes out of /health
    // nor is it ever shed: a worker shedding load is still ready
    if (!this.config.disableHealth) this.#addRoute(healthRoute('/health', this.#healthSource()), '', [], [], { exempt: true });
    if (this.config.env !== 'production') {
      for (const route of docsRoutes(docs.path, () => this.openapi())) this.#addRoute(route, '', [], []);
    }
  }

  /** The find-my-way router underneath. */
  get engine(): FindMyWay.Instance<FindMyWay.HTTPVersion.V1> {
    return this.#router.engine;
  }

  /** The config's `settings`: validated, with the schema's defaults, once a `defineService({ settings, setup })` setup ran. */
  get settings(): Settings {
    return settingsOf(this, this.config);
  }

  /** The OpenTelemetry tracer: the one set with `setTracer`, else one named `serviceName` that follows the globally registered provider (`GlobalTracer`). Never undefined. */
  get tracer(): Tracer {
    return this.#host.tracer;
  }

  /** The prom-client registry holding this App's metrics. */
  get registry(): Registry {
    return this.#registry;
  }

  /** Registered routes, full paths, in registration order; their schemas as JSON Schema (a library's derived one). */
  get routes(): readonly DocumentedRoute[] {
    return this.#router.routes;
  }

  registerController(controller: Controller): void {
    for (const route of controller.routes()) this.#addRoute(route, '', [], [this.#requestHooks], { rateLimit: this.#rateLimit });
  }

  use(module: Module): void {
    module.register(this);
  }

  /**
   * Routes under `prefix`, with middlewares run before each route's own; options first when given
   * (`{ security, rateLimit, onRequest }`, see {@link GroupOptions}). The group is typed with what
   * its middlewares and `onRequest` hooks declare (`Middleware<{ user: User }>`): its `route` and
   * `defineRoute` read it in `ctx.state` (a `TypedGroup`).
   *
   * @example
   * const api = app.group('/api', { rateLimit: { max: 100, windowMs: 60_000 } }, authenticate);
   * const notes = app.group('/notes', requireUser); // requireUser: Middleware<{ user: User }>
   * notes.route({ method: 'GET', path: '/', handler: (ctx) => repo.list(ctx.state.user.id) }); // user: User
   */
  group<const Args extends GroupArgs>(prefix: string, ...args: Args): GroupOf<Args> {
    const { options, middlewares } = groupArgs(prefix, args);
    const add: AddRoute = (r, p, m, h, rateLimit) => this.#addRoute(r, p, m, h, { rateLimit });
    const rateLimit = { option: options.rateLimit, inherited: this.#rateLimit };
    const hooks = [this.#requestHooks];
    return new Group(this, add, prefix, middlewares, hooks, options.security, rateLimit, options.onRequest) as GroupOf<Args>;
  }

  /**
   * Serves the files of `dir` (resolved from the current directory; it must exist) under `prefix`:
   * `GET` and `HEAD`, streamed with backpressure, `ETag` and `Last-Modified` with 304, `Range` with
   * 206 and 416, precompressed `.br`/`.zst`/`.gz` siblings chosen by `Accept-Encoding`, `Cache-Control`
   * (`maxAgeS`, `immutable` for hashed names), `index.html` and an optional single-page-app fallback
   * (see {@link StaticOptions}). A path that tries to leave `dir` (`..` however encoded, backslashes,
   * NUL, a symbolic link whose target is outside), a dotfile and a missing file are the 404 of a path
   * no route matches. The App's `onRequest` hooks and rate limit apply, as to any route
   * (docs/guides/static-files.md).
   *
   * @example
   * app.serveStatic('/assets', 'dist/assets', { immutable: /\.[0-9a-f]{8,}\.\w+$/ });
   * app.serveStatic('/', 'dist', { spaFallback: 'index.html' });
   */
  serveStatic(prefix: string, dir: string, options?: StaticOptions): void {
    const app = this;
    const host = {
      get notFoundHandler() {
        return app.#seams.notFoundHandler;
      },
    };
    for (const route of staticRoutes(prefix, dir, options, host)) {
      this.#addRoute(route, '', [], [this.#requestHooks], { rateLimit: this.#rateLimit, mount: route.path.endsWith('/*') });
    }
  }

  /** An App-wide `onRequest` hook (see `RequestHook`): every route's, and a path no route matches. */
  onRequest(hook: RequestHook): void {
    checkHook(hook, 'onRequest');
    this.#requestHooks.push(hook);
  }

  /**
   * Sends `data` to every WebSocket subscribed to `topic` (see `ctx.subscribe`): in a cluster, on
   * every worker through the primary, and with `coordination.url` on every replica; a standalone App
   * sends to its own sockets. A string is sent as a text message, a Buffer or typed array as a binary
   * one, anything else as JSON. Delivery is at most once, in publish order per publisher; a payload
   * larger than `websockets.maxMessageBytes` throws.
   *
   * @example
   * app.publish('books', { id: book.id, title: book.title });
   */
  publish(topic: string, data: unknown): void {
    const payload = publishedPayload(topic, data, this.config.websockets.maxMessageBytes);
    if (this.config.metrics.enabled) {
      this.#publishes ??= publishCounter(this.#registry, this.config.websockets.metricTopics);
      this.#publishes(topic);
    }
    this.#published++;
    this.#topics.publish(topic, payload);
  }

  /** Maps errors before the default boundary turns them into problems (see `ErrorHandler`); one per App. */
  setErrorHandler(handler: ErrorHandler): void {
    checkHook(handler, 'setErrorHandler');
    this.#seams.errorHandler = handler;
  }

  /** Answers a path no route matches, instead of the default 404 problem (see `NotFoundHandler`). */
  setNotFoundHandler(handler: NotFoundHandler): void {
    checkHook(handler, 'setNotFoundHandler');
    this.#seams.notFoundHandler = handler;
  }

  /** Starts the server; resolves after the graceful shutdown triggered by SIGINT/SIGTERM or `close()`. */
  listen(): Promise<void> {
    return this.#lifecycle.listen();
  }

  /** Resolves with the bound address once listening; rejects if listening failed. */
  ready(): Promise<{ host: string; port: number }> {
    return this.#lifecycle.ready();
  }

  /**
   * Runs the shutdown sequence (health 503, stop accepting, finish in-flight, hooks in order, exit the server)
   * within `shutdown.timeoutMs`, or by `deadline` (epoch milliseconds) when that comes first: a cluster
   * worker passes the primary's, so the budget counts from the signal, not from the relayed message.
   * `stayReady`: `/health` keeps answering as before and there is no drain delay, for an App that leaves
   * while others go on serving (a cluster worker retired by a rolling restart).
   */
  close(options: { deadline?: number | undefined; stayReady?: boolean } = {}): Promise<void> {
    return this.#lifecycle.close(options.deadline, options.stayReady === true);
  }

  /**
   * With `tls`: serves new handshakes with this certificate pair (PEM), read and checked by the
   * caller (a cluster's primary hands each worker the pair it read from `tls.certFile`/`keyFile`);
   * the connections open keep theirs. False when the server refused it (the previous pair stays).
   *
   * @example
   * app.useCertificates({ cert: readFileSync('tls.crt', 'utf8'), key: readFileSync('tls.key', 'utf8') });
   */
  useCertificates(material: { cert: string; key: string; ca?: string | undefined }): boolean {
    return this.#tls?.use(material) ?? false;
  }

  /** The port of the standalone App's own metrics endpoint (when `metrics` is configured), once listening. */
  get metricsPort(): number | undefined {
    return this.#lifecycle.metricsPort;
  }

  /**
   * A number that moves with WebSocket traffic (sockets opened and closed, messages, publishes): a
   * cluster worker pushes its metrics when it changed, as it does when requests start or end.
   */
  get socketActivity(): number {
    return (this.#hub?.activity ?? 0) + this.#published;
  }

  /** Whether the last shutdown finished inside the budget with no failing hook. */
  get cleanShutdown(): boolean {
    return this.#lifecycle.clean;
  }

  /**
   * The route templates of the requests being served and of the last one that
   * ended: what a cluster worker tells the primary with its heartbeats and when
   * it dies, so that a request that keeps killing workers is named.
   *
   * @example
   * app.requestRoutes(); // { inFlight: ['/books/:id'], last: '/health' }
   */
  requestRoutes(): RequestRoutes {
    return this.#inFlight.routes();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Registers a shutdown hook; hooks run in registration order and share one signal that aborts when the budget is spent. */
  onShutdown(hook: ShutdownHook): void {
    if (typeof hook !== 'function') throw createError('FLO_ERR_BAD_HOOK', { owner: 'onShutdown', got: describeValue(hook) });
    this.#hooks.push(hook);
  }

  setMetricsCollector(collector: MetricsCollector): void {
    this.#host.metrics = collector;
  }

  setTracer(tracer: Tracer): void {
    this.#host.tracer = tracer;
  }

  setTranslator(translator: Translator): void {
    this.#host.scope.translator = translator;
  }

  /**
   * Registers a scheduler and a shutdown hook that stops it. In a cluster
   * worker (`runSchedulers: false`) this records nothing: the cluster runs
   * its schedulers once, in the primary.
   */
  registerScheduler(scheduler: Scheduler): void {
    if (!this.#runSchedulers) return;
    this.#schedulers.push(scheduler);
    this.onShutdown((signal) => this.#lifecycle.stopScheduler(scheduler, signal));
  }

  /**
   * Runs the registered job `name` (a `CronScheduler`'s, or any scheduler with `jobNames` and
   * `runJob`) once, now, whether or not the App listens; resolves when the run finishes, rejects with
   * the job's error. The run is the job's own as a fire's would be (its signal aborting at the
   * shutdown deadline, `currentContext()`, never overlapping another run of the job: it waits for one
   * going on), logged and counted once the schedulers are started. A name no scheduler has:
   * `FLO_ERR_UNKNOWN_JOB`. A cluster worker runs no scheduler (the primary's service thread does):
   * there it rejects with `FLO_ERR_JOB_NOT_RUNNABLE` (docs/guides/testing.md).
   *
   * @example
   * app.registerScheduler(new CronScheduler([{ name: 'purge', cron: '0 0 3 * * *', run: purge }]));
   * await app.runScheduled('purge'); // in a test: no waiting for 03:00
   */
  runScheduled(name: string): Promise<void> {
    if (!this.#runSchedulers) {
      const reason = 'this App runs no scheduler (runSchedulers: false; in a cluster worker, the primary runs them)';
      return Promise.reject(createError('FLO_ERR_JOB_NOT_RUNNABLE', { name: JSON.stringify(name), reason }));
    }
    return runScheduledJob(this.#schedulers, name);
  }

  /**
   * Registers work to be done once per process tree before any request is served: a standalone App
   * runs the hooks in `listen`, in registration order, before it binds (a hook that throws makes
   * `listen` and `ready` reject); a cluster runs them in its primary's service thread, and its workers
   * listen once they are done (ARCHITECTURE.md, "Start-up"); a cluster worker (`runSchedulers: false`)
   * only notes that the service has some (see `awaitsStartHooks`). The hook's signal aborts if the
   * shutdown begins while it runs.
   *
   * @example
   * app.beforeServe((signal) => migrate(db, signal)); // once per cluster, before the workers serve
   */
  beforeServe(hook: StartHook): void {
    checkStartHook(hook);
    if (!this.#runSchedulers) {
      noteStartHooks(this);
      return;
    }
    this.#startHooks.push(hook);
  }

  registerHealthChecker(checker: HealthChecker): void {
    if (typeof checker?.check !== 'function' || typeof checker.name !== 'string' || checker.name === '') {
      throw createError('FLO_ERR_BAD_HEALTH_CHECKER');
    }
    if (this.#checkers.some((c) => c.name === checker.name)) throw createError('FLO_ERR_DUPLICATE_HEALTH_CHECKER', { name: checker.name });
    this.#checkers.push(checker);
  }

  /** Runs a request through the whole pipeline without a socket (light-my-request). */
  inject(request: InjectOptions | string): Promise<InjectResponse> {
    // loaded on first use: production processes never inject, and every module adds to a worker's start-up
    return import('light-my-request').then(({ default: injectRequest }) => injectRequest(this.#handler, request));
  }

  /**
   * Opens a WebSocket on `path` for a test, as `inject` runs a request: the upgrade request goes
   * through the whole pipeline (hooks, validation, middlewares, the route's `websocket`) over a
   * listener of its own on an ephemeral port of 127.0.0.1, closed once the handshake is answered; the
   * App need not listen, and binds neither its `port` nor its metrics port. Resolves with the open
   * `ws` WebSocket (its events held until the code after `await` has run, so a listener added then
   * misses nothing); rejects with a `WebSocketRefused` (`statusCode`, `headers`, `body`) when the App
   * answers anything else. Close the socket, or the App (1001).
   *
   * @example
   * const socket = await app.injectWebSocket('/echo', { headers: { cookie } });
   * socket.send('hi');
   * const [reply] = await once(socket, 'message'); // from node:events
   */
  async injectWebSocket(path: string, options?: InjectWebSocketOptions): Promise<WebSocket> {
    // loaded on first use, as inject's light-my-request: production processes never call it
    const { injectWebSocket } = await import('./transport/inject-websocket.ts');
    return injectWebSocket({ config: this.config, handler: this.#handler, upgrade: upgradeListener(this.#handler) }, path, options);
  }

  /** The OpenAPI 3.1 document of the registered routes (rebuilt when routes or documented hooks were added since). */
  openapi(): OpenApiDocument {
    const { routes, hooks } = this.#router.documentedRoutes();
    const version = `${this.#router.version}/${hooks}`;
    if (this.#openapi?.version !== version) this.#openapi = { version, document: buildOpenApi(this.config, routes) };
    return this.#openapi.document;
  }

  #addRoute(route: Route, prefix: string, middlewares: readonly Middleware[], hooks: HookChain, registration?: RouteRegistration): void {
    // a route's `security` names the config's schemes: refused before it is routed, as a bad pattern is
    if (typeof route === 'object' && route !== null && route.security !== undefined) {
      const where = `route ${String(route.method)} ${joinPath(prefix, String(route.path))}`;
      checkSecurity(route.security, this.config.docs.securitySchemes, where);
    }
    let served = route;
    if (typeof route === 'object' && route !== null && route.websocket !== undefined) {
      const hub = this.#webSockets();
      served = { ...route, handler: webSocketHandler(route, () => hub, attachSocket) };
    }
    this.#router.add(served, prefix, middlewares, hooks, registration);
  }

  /** The hub of this App's WebSockets, made (and its metrics registered) on first use. */
  #webSockets(): WebSocketHub {
    const { state } = this.#lifecycle;
    this.#hub ??= appHub({
      config: this.config,
      logger: this.logger,
      registry: this.#registry,
      drain: this.#drain.signal,
      deadline: this.#deadline.signal,
      closing: state === 'closing' || state === 'closed',
    });
    return this.#hub;
  }

  #healthSource() {
    const app = this;
    return {
      checkers: this.#checkers,
      timeoutMs: this.config.health.timeoutMs,
      production: this.config.env === 'production',
      get draining() {
        return app.#lifecycle.draining;
      },
    };
  }
}

export type { AddressInfo, InjectResponse, Server };

function withoutListenerLimit(controller: AbortController): AbortController {
  setMaxListeners(0, controller.signal);
  return controller;
}
