import { setMaxListeners } from 'node:events';
import type { InjectOptions, Response as InjectResponse } from 'light-my-request';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { checkSecurity } from '../config/security-requirements.ts';
import type { KConfig, ResolvedConfig } from '../config/types.ts';
import { resolveConfig } from '../config/validate.ts';
import { startSchedulers } from '../coordination/start.ts';
import { CatalogTranslator } from '../i18n/catalog-translator.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { type AppConfig, type AppOptions, appRateLimit, splitRateLimitKey } from './app-options.ts';
import { attachSocket } from './core/ctx.ts';
import { type AddRoute, Group, groupArgs } from './core/group.ts';
import { checkHook, type HookChain, type Seams } from './core/hooks.ts';
import type { PipelineHost } from './core/host.ts';
import { createRequestHandler } from './core/pipeline.ts';
import type { RateLimitPolicy } from './core/rate-limit-policy.ts';
import type { AppRole, Controller, GroupArgs, HealthChecker, Registrar } from './core/registrar.ts';
import { type ErrorHandler, joinPath, type Middleware, type NotFoundHandler, type RequestHook, type Route } from './core/route.ts';
import { type RouteRegistration, Router } from './core/router.ts';
import { installHealth } from './health/install-health.ts';
import { installSchedulers } from './lifecycle/install-schedulers.ts';
import { Lifecycle } from './lifecycle/lifecycle.ts';
import type { ShutdownHook } from './lifecycle/shutdown.ts';
import type { StartHook } from './lifecycle/start-hooks.ts';
import { GlobalTracer } from './observability/global-tracer.ts';
import { installMetrics } from './observability/install-metrics.ts';
import { createLogger } from './observability/logger.ts';
import { installOpenApi } from './openapi/install-openapi.ts';
import type { OpenApiDocument } from './openapi/openapi.ts';
import { InFlight } from './overload/in-flight.ts';
import { appPipelineHost } from './pipeline-host.ts';
import { installRateLimits } from './rate-limit/install-rate-limits.ts';
import { installSessions } from './sessions/install-sessions.ts';
import { installStatic } from './static/install-static.ts';
import type { StaticOptions } from './static/static-options.ts';
import type { InjectWebSocketOptions } from './transport/inject-websocket.ts';
import { installTls } from './transport/install-tls.ts';
import type { QueuedHandler } from './transport/request-queue.ts';
import type { TlsCertificates } from './transport/tls-certificates.ts';
import { type AppWebSockets, installWebSockets } from './websocket/install-websockets.ts';
import { upgradeListener } from './websocket/websocket-route.ts';

/** What an App is made of: its core, and the features installed from the config (see {@link appParts}). */
export interface AppParts {
  readonly config: ResolvedConfig;
  readonly role: AppRole;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly router: Router;
  readonly inFlight: InFlight;
  /** The request pipeline's host: `setMetricsCollector`, `setTracer` and `setTranslator` write into it. */
  readonly host: PipelineHost;
  readonly handler: QueuedHandler;
  /** The server's `upgrade` listener: upgrade requests through the same pipeline. */
  readonly upgrade: ReturnType<typeof upgradeListener>;
  readonly lifecycle: Lifecycle;
  readonly tls: TlsCertificates | undefined;
  readonly sockets: AppWebSockets;
  /** The App-wide `onRequest` hooks (they also run for a path no route matches). */
  readonly requestHooks: RequestHook[];
  readonly seams: Seams;
  readonly shutdownHooks: ShutdownHook[];
  /** The App's own rate limit (`rateLimit` of the config): every route's unless its group or itself sets one. */
  readonly rateLimit: RateLimitPolicy | false | undefined;
  readonly addChecker: (checker: HealthChecker) => void;
  readonly openapi: () => OpenApiDocument;
  /** `app.registerController`: its routes, with the App's `onRequest` hooks and rate limit. */
  registerController(controller: Controller): void;
  /** `app.group`: a group of `app`'s routes under `prefix`. */
  group(app: Registrar, prefix: string, args: GroupArgs): Group;
  /** `app.inject`. */
  inject(request: InjectOptions | string): Promise<InjectResponse>;
  /** `app.injectWebSocket`. */
  injectWebSocket(path: string, options: InjectWebSocketOptions | undefined): Promise<WebSocket>;
  /** `app.serveStatic`: the mount's routes, with the App's `onRequest` hooks and rate limit. */
  serveStatic(prefix: string, dir: string, options: StaticOptions | undefined): void;
  /** `app.registerScheduler`: recorded with a shutdown hook that stops it, unless `runSchedulers` is false. */
  registerScheduler(scheduler: Scheduler): void;
  /** `app.runScheduled`. */
  runScheduled(name: string): Promise<void>;
  /** `app.beforeServe`: recorded, or only noted for `app` when `runSchedulers` is false. */
  beforeServe(hook: StartHook, app: object): void;
  /** `app.onRequest`: checked, then appended to `requestHooks`. */
  onRequest(hook: RequestHook): void;
  /** `app.setErrorHandler`: checked, then the one of `seams`. */
  setErrorHandler(handler: ErrorHandler): void;
  /** `app.setNotFoundHandler`: checked, then the one of `seams`. */
  setNotFoundHandler(handler: NotFoundHandler): void;
  /** `app.onShutdown`: checked, then appended to `shutdownHooks`. */
  onShutdown(hook: ShutdownHook): void;
  /** `app.setSessionStore`: the store every `ctx.session()` of this App uses, while the App is idle and the sessions unused. */
  setSessionStore(store: unknown): void;
  /** Routes a route: its `security` checked against the config's schemes, a `websocket` route served by the hub. */
  addRoute(route: Route, prefix: string, middlewares: readonly Middleware[], hooks: HookChain, registration?: RouteRegistration): void;
}

/**
 * Builds an App's parts from its config and options: the logger, the metrics, the router, the request
 * pipeline and its lifecycle, and the features, each installed from its own folder (rate limits,
 * sessions, WebSockets and topics, TLS material, `GET /health`, the OpenAPI document and its routes,
 * static files, the schedulers and `beforeServe` hooks).
 *
 * @example
 * const parts = appParts({ serviceName: 'books' }, {});
 * parts.addRoute({ method: 'GET', path: '/', handler: (ctx) => ctx.ok('hi') }, '', [], [parts.requestHooks]);
 */
export function appParts(given: KConfig | AppConfig | undefined, options: AppOptions): AppParts {
  const { plain, key } = splitRateLimitKey(given);
  const config = resolveConfig(plain ?? {});
  const rateLimit = appRateLimit(config, key);
  const role = options.role ?? 'standalone';
  const logger = createLogger(config, options.logStream, options.logBindings, options.logger);
  const inFlight = new InFlight();
  const deadline = new AbortController();
  // every open event stream waits on it: no listener limit (see sse.ts, which removes its own)
  const drain = new AbortController();
  setMaxListeners(0, drain.signal);
  const servesMetrics = options.serveMetrics ?? given?.metrics !== undefined;
  const { registry, collector, shed, admission, wire } = installMetrics(config, logger, {
    processMetrics: options.processMetrics ?? servesMetrics,
  });
  const limits = installRateLimits({ config, logger, registry, store: options.counterStore });
  const { limits: l, timeouts, i18n } = config;
  const router = new Router({
    maxParamLength: l.paramLength,
    bodyLimit: l.bodyBytes,
    handlerMs: timeouts.handlerMs,
    limiter: limits.limiter,
    // routes are added once the pipeline below exists: their steps are the pipeline's
    steps: (route) => pipeline.stepsOf(route),
  });
  const sessions = installSessions(config, logger, options.sessionStore);
  const requestHooks: RequestHook[] = [];
  const seams: Seams = {};
  let lifecycle: Lifecycle | undefined;
  const host = appPipelineHost({
    ...{ config, logger, router, inFlight, drain: drain.signal, deadline: deadline.signal, requestHooks, seams },
    ...{ wire, admission, shed, sessions: sessions.host, metrics: collector },
    closingConnections: () => lifecycle?.closingConnections ?? false,
    tracer: new GlobalTracer(config.serviceName),
    translator: i18n === undefined ? undefined : CatalogTranslator.fromDirectory(i18n.directory, i18n.defaultLocale),
  });
  const pipeline = createRequestHandler(host);
  const { handler, timeouts: handlerTimeouts } = pipeline;
  const sockets = installWebSockets({
    ...{ config, logger, registry, role, drain: drain.signal, deadline: deadline.signal, attach: attachSocket, topics: options.topics },
    closing: () => lifecycle?.state === 'closing' || lifecycle?.state === 'closed',
  });
  const tls = installTls(config, logger, registry, options.watchCertificates ?? true);
  const upgrade = upgradeListener(handler);
  const shutdownHooks: ShutdownHook[] = [];
  const schedulers = installSchedulers({
    runs: options.runSchedulers ?? true,
    shutdownHooks,
    // the tracer is read once the App binds: `setTracer` may swap it before `listen`
    start: (list) => startSchedulers(list, { logger, registry, tracer: host.observability.tracer }, config),
    stop: (scheduler, signal) => lifecycle?.stopScheduler(scheduler, signal),
  });
  lifecycle = new Lifecycle({
    config,
    logger,
    role,
    binding: { handler, admission, upgrade, reusePort: options.reusePort ?? false, source: options.connections, wire },
    tls,
    start: schedulers.start,
    shutdown: {
      ...{ inFlight, deadline, drain, hooks: shutdownHooks, sockets: () => sockets.idle() },
      // the App has closed: no timer of its own may outlive it
      closed: () => {
        admission?.stop();
        handlerTimeouts.stop();
        limits.close();
        sessions.close();
      },
    },
    metricsEndpoint: servesMetrics ? registry : undefined,
    handleSignals: options.handleSignals ?? true,
    replicas: sockets.replicas,
  });
  const addRoute: AppParts['addRoute'] = (route, prefix, middlewares, hooks, registration) => {
    // a route's `security` names the config's schemes: refused before it is routed, as a bad pattern is
    if (typeof route === 'object' && route !== null && route.security !== undefined) {
      const where = `route ${String(route.method)} ${joinPath(prefix, String(route.path))}`;
      checkSecurity(route.security, config.docs.securitySchemes, where);
    }
    router.add(sockets.served(route), prefix, middlewares, hooks, registration);
  };
  // the built-in routes run no onRequest hook: an App-wide auth check must not lock probes out of /health
  // nor is it ever shed: a worker shedding load is still ready
  const builtIn = (registration?: RouteRegistration) => (route: Route) => addRoute(route, '', [], [], registration);
  const started = lifecycle;
  const addChecker = installHealth(config, () => started.draining, builtIn({ exempt: true }));
  const openapi = installOpenApi(config, router, builtIn());
  const registerController: AppParts['registerController'] = (controller) => {
    for (const route of controller.routes()) addRoute(route, '', [], [requestHooks], { rateLimit });
  };
  const group: AppParts['group'] = (app, prefix, args) => {
    const { options: own, middlewares } = groupArgs(prefix, args);
    const add: AddRoute = (r, p, m, h, limit) => addRoute(r, p, m, h, { rateLimit: limit });
    const limits = { option: own.rateLimit, inherited: rateLimit };
    return new Group(app, add, prefix, middlewares, [requestHooks], own.security, limits, own.onRequest);
  };
  // loaded on first use: production processes never inject, and every module adds to a worker's start-up
  const inject: AppParts['inject'] = (request) =>
    import('light-my-request').then(({ default: injectRequest }) => injectRequest(handler, request));
  // loaded on first use, as inject's light-my-request: production processes never call it
  const injectWebSocket: AppParts['injectWebSocket'] = async (path, socket) => {
    const { injectWebSocket: open } = await import('./transport/inject-websocket.ts');
    return open({ config, handler, upgrade }, path, socket);
  };
  const serveStatic = installStatic(seams, (route, mount) => addRoute(route, '', [], [requestHooks], { rateLimit, mount }));
  const onRequest: AppParts['onRequest'] = (hook) => {
    checkHook(hook, 'onRequest');
    requestHooks.push(hook);
  };
  const setErrorHandler: AppParts['setErrorHandler'] = (handler) => {
    checkHook(handler, 'setErrorHandler');
    seams.errorHandler = handler;
  };
  const setNotFoundHandler: AppParts['setNotFoundHandler'] = (handler) => {
    checkHook(handler, 'setNotFoundHandler');
    seams.notFoundHandler = handler;
  };
  const onShutdown: AppParts['onShutdown'] = (hook) => {
    checkHook(hook, 'onShutdown');
    shutdownHooks.push(hook);
  };
  return {
    ...{ config, role, logger, registry, router, inFlight, host, handler, upgrade, lifecycle, tls, sockets, requestHooks, seams },
    ...{ shutdownHooks, rateLimit, addChecker, openapi, addRoute, serveStatic, registerController, group, inject, injectWebSocket },
    ...{ registerScheduler: schedulers.register, runScheduled: schedulers.run, beforeServe: schedulers.beforeServe },
    ...{ onRequest, setErrorHandler, setNotFoundHandler, onShutdown },
    setSessionStore: (store) => sessions.set(store, started.state),
  };
}
