import type { Tracer } from '@opentelemetry/api';
import type FindMyWay from 'find-my-way';
import type { InjectOptions, Response as InjectResponse } from 'light-my-request';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { type Settings, settingsOf } from '../config/settings.ts';
import type { KConfig, ResolvedConfig } from '../config/types.ts';
import type { Translator } from '../i18n/translator.ts';
import type { MetricsCollector } from '../metrics/metrics-collector.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { AppConfig, AppOptions } from './app-options.ts';
import { type AppParts, appParts } from './app-parts.ts';
import type { AppRole, Controller, GroupArgs, HealthChecker, Module, Registrar } from './core/registrar.ts';
import type { ErrorHandler, NotFoundHandler, RequestHook } from './core/route.ts';
import type { DocumentedRoute } from './core/route-schemas.ts';
import type { ShutdownHook } from './lifecycle/shutdown.ts';
import type { StartHook } from './lifecycle/start-hooks.ts';
import type { OpenApiDocument } from './openapi/openapi.ts';
import type { RequestRoutes } from './overload/in-flight.ts';
import type { ExpressSessionStore, SessionStore } from './sessions/express-store.ts';
import type { StaticOptions } from './static/static-options.ts';
import type { InjectWebSocketOptions } from './transport/inject-websocket.ts';
import type { GroupOf } from './typed/typed-group.ts';

/**
 * The application: request logging, CORS, recovery, the error handler, `GET /health` and the docs routes are set up by the constructor,
 * in this order. In a cluster, each worker runs one, and so does the primary's service thread (`role`); a test makes one and calls
 * `inject`.
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
  readonly #parts: AppParts; // the core and the features installed from the config (see `appParts`)

  constructor(config?: KConfig | AppConfig, options: AppOptions = {}) {
    this.#parts = appParts(config, options);
    ({ config: this.config, role: this.role, logger: this.logger } = this.#parts);
  }

  /** The find-my-way router underneath. */
  get engine(): FindMyWay.Instance<FindMyWay.HTTPVersion.V1> {
    return this.#parts.router.engine;
  }

  /** The config's `settings`: validated, with the schema's defaults, once a `defineService({ settings, setup })` setup ran. */
  get settings(): Settings {
    return settingsOf(this, this.config);
  }

  /** The OpenTelemetry tracer: the one set with `setTracer`, else one named `serviceName` that follows the globally registered provider (`GlobalTracer`). Never undefined. */
  get tracer(): Tracer {
    return this.#parts.host.observability.tracer;
  }

  /** The prom-client registry holding this App's metrics. */
  get registry(): Registry {
    return this.#parts.registry;
  }

  /** Registered routes, full paths, in registration order; their schemas as JSON Schema (a library's derived one). */
  get routes(): readonly DocumentedRoute[] {
    return this.#parts.router.routes;
  }

  registerController(controller: Controller): void {
    this.#parts.registerController(controller);
  }
  use(module: Module): void {
    module.register(this);
  }

  /**
   * Routes under `prefix`, with middlewares run before each route's own; options first when given (`{ security, rateLimit, onRequest }`,
   * see {@link GroupOptions}). The group is typed with what its middlewares and `onRequest` hooks declare (`Middleware<{ user: User }>`):
   * its `route` and `defineRoute` read it in `ctx.state` (a `TypedGroup`).
   *
   * @example
   * const api = app.group('/api', { rateLimit: { max: 100, windowMs: 60_000 } }, authenticate);
   * const notes = app.group('/notes', requireUser); // requireUser: Middleware<{ user: User }>
   * notes.route({ method: 'GET', path: '/', handler: (ctx) => repo.list(ctx.state.user.id) }); // user: User
   */
  group<const Args extends GroupArgs>(prefix: string, ...args: Args): GroupOf<Args> {
    return this.#parts.group(this, prefix, args) as GroupOf<Args>;
  }

  /**
   * Serves the files of `dir` (resolved from the current directory; it must exist) under `prefix`: `GET` and `HEAD`, streamed with
   * backpressure, `ETag` and `Last-Modified` with 304, `Range` with 206 and 416, precompressed `.br`/`.zst`/`.gz` siblings chosen by
   * `Accept-Encoding`, `Cache-Control` (`maxAgeS`, `immutable` for hashed names), `index.html` and an optional single-page-app fallback
   * (see {@link StaticOptions}). A path that tries to leave `dir` (`..` however encoded, backslashes, NUL, a symbolic link whose target
   * is outside), a dotfile and a missing file are the 404 of a path no route matches. The App's `onRequest` hooks and rate limit apply,
   * as to any route (docs/guides/static-files.md).
   *
   * @example
   * app.serveStatic('/assets', 'dist/assets', { immutable: /\.[0-9a-f]{8,}\.\w+$/ });
   * app.serveStatic('/', 'dist', { spaFallback: 'index.html' });
   */
  serveStatic(prefix: string, dir: string, options?: StaticOptions): void {
    this.#parts.serveStatic(prefix, dir, options);
  }

  /** An App-wide `onRequest` hook (see `RequestHook`): every route's, and a path no route matches. */
  onRequest(hook: RequestHook): void {
    this.#parts.onRequest(hook);
  }

  /**
   * Sends `data` to every WebSocket subscribed to `topic` (see `ctx.subscribe`): in a cluster, on every worker through the primary, and
   * with `coordination.url` on every replica; a standalone App sends to its own sockets. A string is sent as a text message, a Buffer or
   * typed array as a binary one, anything else as JSON. Delivery is at most once, in publish order per publisher; a payload larger than
   * `websockets.maxMessageBytes` throws.
   *
   * @example
   * app.publish('books', { id: book.id, title: book.title });
   */
  publish(topic: string, data: unknown): void {
    this.#parts.sockets.publish(topic, data);
  }

  /** Maps errors before the default boundary turns them into problems (see `ErrorHandler`); one per App. */
  setErrorHandler(handler: ErrorHandler): void {
    this.#parts.setErrorHandler(handler);
  }

  /** Answers a path no route matches, instead of the default 404 problem (see `NotFoundHandler`). */
  setNotFoundHandler(handler: NotFoundHandler): void {
    this.#parts.setNotFoundHandler(handler);
  }

  /** Starts the server; resolves after the graceful shutdown triggered by SIGINT/SIGTERM or `close()`. */
  listen(): Promise<void> {
    return this.#parts.lifecycle.listen();
  }

  /** Resolves with the bound address once listening; rejects if listening failed. */
  ready(): Promise<{ host: string; port: number }> {
    return this.#parts.lifecycle.ready();
  }

  /**
   * Runs the shutdown sequence (health 503, stop accepting, finish in-flight, hooks in order, exit the server) within
   * `shutdown.timeoutMs`, or by `deadline` (epoch milliseconds) when that comes first: a cluster worker passes the primary's, so the
   * budget counts from the signal, not from the relayed message. `stayReady`: `/health` keeps answering as before and there is no drain
   * delay, for an App that leaves while others go on serving (a cluster worker retired by a rolling restart).
   */
  close(options: { deadline?: number | undefined; stayReady?: boolean } = {}): Promise<void> {
    return this.#parts.lifecycle.close(options.deadline, options.stayReady === true);
  }

  /**
   * With `tls`: serves new handshakes with this certificate pair (PEM), read and checked by the caller (a cluster's primary hands each
   * worker the pair it read from `tls.certFile`/`keyFile`); the connections open keep theirs. False when the server refused it (the
   * previous pair stays).
   *
   * @example
   * app.useCertificates({ cert: readFileSync('tls.crt', 'utf8'), key: readFileSync('tls.key', 'utf8') });
   */
  useCertificates(material: { cert: string; key: string; ca?: string | undefined }): boolean {
    return this.#parts.tls?.use(material) ?? false;
  }

  /** The port of the standalone App's own metrics endpoint (when `metrics` is configured), once listening. */
  get metricsPort(): number | undefined {
    return this.#parts.lifecycle.metricsPort;
  }

  /**
   * A number that moves with WebSocket traffic (sockets opened and closed, messages, publishes): a cluster worker pushes its metrics when
   * it changed, as it does when requests start or end.
   */
  get socketActivity(): number {
    return this.#parts.sockets.activity;
  }

  /** Whether the last shutdown finished inside the budget with no failing hook. */
  get cleanShutdown(): boolean {
    return this.#parts.lifecycle.clean;
  }

  /**
   * The route templates of the requests being served and of the last one that ended: what a cluster worker tells the primary with its
   * heartbeats and when it dies, so that a request that keeps killing workers is named.
   *
   * @example
   * app.requestRoutes(); // { inFlight: ['/books/:id'], last: '/health' }
   */
  requestRoutes(): RequestRoutes {
    return this.#parts.inFlight.routes();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Registers a shutdown hook; hooks run in registration order and share one signal that aborts when the budget is spent. */
  onShutdown(hook: ShutdownHook): void {
    this.#parts.onShutdown(hook);
  }

  setMetricsCollector(collector: MetricsCollector): void {
    this.#parts.host.observability.metrics = collector;
  }
  setTracer(tracer: Tracer): void {
    this.#parts.host.observability.tracer = tracer;
  }
  setTranslator(translator: Translator): void {
    this.#parts.host.scope.translator = translator;
  }

  /**
   * Keeps this App's sessions in `store` instead of `sessions.store`: any express-session store (connect-redis,
   * connect-pg-simple, …) or a {@link SessionStore}. Once per App, in the service's setup: later (listening, or a
   * request served) is `FLO_ERR_SESSION_STORE_FIXED`. In a cluster each worker uses it directly (docs/guides/sessions.md).
   *
   * @example
   * app.setSessionStore(new RedisStore({ client, prefix: 'books:sess:' })); // RedisStore from connect-redis
   */
  setSessionStore(store: SessionStore | ExpressSessionStore): void {
    this.#parts.setSessionStore(store);
  }

  /**
   * Registers a scheduler and a shutdown hook that stops it. In a cluster worker (`runSchedulers: false`) this records nothing: the
   * cluster runs its schedulers once, in the primary.
   */
  registerScheduler(scheduler: Scheduler): void {
    this.#parts.registerScheduler(scheduler);
  }

  /**
   * Runs the registered job `name` (a `CronScheduler`'s, or any scheduler with `jobNames` and `runJob`) once, now, whether or not the App
   * listens; resolves when the run finishes, rejects with the job's error. The run is the job's own as a fire's would be (its signal
   * aborting at the shutdown deadline, `currentContext()`, never overlapping another run of the job: it waits for one going on), logged
   * and counted once the schedulers are started. A name no scheduler has: `FLO_ERR_UNKNOWN_JOB`. A cluster worker runs no scheduler (the
   * primary's service thread does): there it rejects with `FLO_ERR_JOB_NOT_RUNNABLE` (docs/guides/testing.md).
   *
   * @example
   * app.registerScheduler(new CronScheduler([{ name: 'purge', cron: '0 0 3 * * *', run: purge }]));
   * await app.runScheduled('purge'); // in a test: no waiting for 03:00
   */
  runScheduled(name: string): Promise<void> {
    return this.#parts.runScheduled(name);
  }

  /**
   * Registers work to be done once per process tree before any request is served: a standalone App runs the hooks in `listen`, in
   * registration order, before it binds (a hook that throws makes `listen` and `ready` reject); a cluster runs them in its primary's
   * service thread, and its workers listen once they are done (ARCHITECTURE.md, "Start-up"); a cluster worker (`runSchedulers: false`)
   * only notes that the service has some (see `awaitsStartHooks`). The hook's signal aborts if the shutdown begins while it runs.
   *
   * @example
   * app.beforeServe((signal) => migrate(db, signal)); // once per cluster, before the workers serve
   */
  beforeServe(hook: StartHook): void {
    this.#parts.beforeServe(hook, this);
  }

  registerHealthChecker(checker: HealthChecker): void {
    this.#parts.addChecker(checker);
  }

  /** Runs a request through the whole pipeline without a socket (light-my-request). */
  inject(request: InjectOptions | string): Promise<InjectResponse> {
    return this.#parts.inject(request);
  }

  /**
   * Opens a WebSocket on `path` for a test, as `inject` runs a request: the upgrade request goes through the whole pipeline (hooks,
   * validation, middlewares, the route's `websocket`) over a listener of its own on an ephemeral port of 127.0.0.1, closed once the
   * handshake is answered; the App need not listen, and binds neither its `port` nor its metrics port. Resolves with the open `ws`
   * WebSocket (its events held until the code after `await` has run, so a listener added then misses nothing); rejects with a
   * `WebSocketRefused` (`statusCode`, `headers`, `body`) when the App answers anything else. Close the socket, or the App (1001).
   *
   * @example
   * const socket = await app.injectWebSocket('/echo', { headers: { cookie } });
   * socket.send('hi');
   * const [reply] = await once(socket, 'message'); // from node:events
   */
  injectWebSocket(path: string, options?: InjectWebSocketOptions): Promise<WebSocket> {
    return this.#parts.injectWebSocket(path, options);
  }

  /** The OpenAPI 3.1 document of the registered routes (rebuilt when routes or documented hooks were added since). */
  openapi(): OpenApiDocument {
    return this.#parts.openapi();
  }
}
