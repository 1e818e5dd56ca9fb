/**
 * flotilla: HTTP services on Node.js that run as a cluster.
 *
 * @example
 * import { App, KError, newPage } from 'flotilla';
 * const app = new App({ serviceName: 'books' });
 * app.registerController({ routes: () => [{ method: 'GET', path: '/hello', handler: () => ({ hello: 'world' }) }] });
 * await app.listen();
 */

export type { Response as InjectResponse } from 'light-my-request';
export { App } from './app/app.ts';
export type { AppConfig, AppOptions } from './app/app-options.ts';
export { type JwtAuth, type JwtAuthOptions, type JwtKey, jwtAuth } from './app/auth/jwt-auth.ts';
export type {
  BodyKind,
  BufferedMultipart,
  FormBody,
  FormLimits,
  MultipartBody,
  MultipartOptions,
  MultipartPart,
} from './app/bodies/index.ts';
export { type ConnectMiddleware, fromConnect } from './app/connect/from-connect.ts';
export type { ClearCookieOptions, CookieOptions, Cookies } from './app/cookies/cookies.ts';
export { Ctx, type RequestState } from './app/core/ctx.ts';
export { currentContext } from './app/core/current-context.ts';
export { Group } from './app/core/group.ts';
export { clientAddress, type RateLimitOptions } from './app/core/rate-limit-policy.ts';
export type { AppRole, Controller, GroupArgs, GroupOptions, HealthChecker, Module, Registrar } from './app/core/registrar.ts';
export type { Repository, RequestContext } from './app/core/request-context.ts';
export type { Handler, HttpMethod, JsonSchema, Middleware, RequestHook, Route, RouteSchema } from './app/core/route.ts';
export type { RouteProblem } from './app/core/route-problems.ts';
export {
  defineService,
  type ServiceApp,
  type ServiceDefinition,
  type ServiceOptions,
  type ServiceSetup,
  type SettingsOf,
} from './app/define-service.ts';
export type { CheckResult, HealthReport } from './app/health/health.ts';
export { type HttpCheckOptions, httpCheck } from './app/health/http-check.ts';
export type { ShutdownHook } from './app/lifecycle/shutdown.ts';
export type { StartHook } from './app/lifecycle/start-hooks.ts';
export type { OpenApiDocument } from './app/openapi/openapi.ts';
export { newPage, offsetOf, PAGE_DEFAULTS, type Page, type PageQuery, pageSchema, parsePagination } from './app/pagination/page.ts';
export type { ExpressSession, ExpressSessionStore, SessionStore, StoredSession } from './app/sessions/express-store.ts';
export type { Session, SessionData } from './app/sessions/session.ts';
export type { StaticOptions } from './app/static/static-options.ts';
export type { SseEvent, SseOptions } from './app/streams/sse.ts';
export type { StreamSource } from './app/streams/stream-reply.ts';
export type { InjectWebSocketOptions, WebSocketRefused } from './app/transport/inject-websocket.ts';
export {
  type DefineRoute,
  defineRoute,
  type HandlerResult,
  type NoSchemas,
  type PathParams,
  type RouteCtx,
  type RouteDefinition,
  type RouteSchemas,
  type TypedRoute,
} from './app/typed/define-route.ts';
export { type PageOf, type Paginated, paginated } from './app/typed/paginated.ts';
export type { JsonSchemaToTs, ReplyType, SchemaType, TypeBoxProvider, TypeProvider } from './app/typed/type-provider.ts';
export type { GroupOf, TypedGroup } from './app/typed/typed-group.ts';
export { withTypeProvider } from './app/typed/with-type-provider.ts';
export { ConfigError, type ConfigProblem } from './config/config-error.ts';
export { type LoadConfigOptions, loadConfig } from './config/load-file.ts';
export type { ConfigOverrides } from './config/overrides.ts';
export type { SecurityRequirement } from './config/security-requirements.ts';
export type {
  ClusterConfig,
  CompressionConfig,
  CookiesConfig,
  CoordinationConfig,
  CorsConfig,
  DocsConfig,
  DocsContact,
  DocsLicense,
  DocsSecurityScheme,
  DocsTag,
  HealthConfig,
  KConfig,
  LimitsConfig,
  LoggingConfig,
  MetricsConfig,
  ResolvedConfig,
  SecurityHeadersConfig,
  ShutdownConfig,
  TimeoutsConfig,
} from './config/types.ts';
export { resolveConfig } from './config/validate.ts';
export { ERROR_CODES, type ErrorCode } from './errors/codes.ts';
export type { FlotillaErrorBase, FlotillaErrorCode } from './errors/flotilla-error.ts';
export { FLOTILLA_ERRORS, FlotillaError } from './errors/flotilla-error.ts';
export { KError, type KErrorOptions } from './errors/k-error.ts';
export type { Problem } from './errors/problem.ts';
export type { Translator } from './i18n/translator.ts';
export type { MetricsCollector, RequestMetric } from './metrics/metrics-collector.ts';
export { PromMetricsCollector } from './metrics/prom-collector.ts';
export { Counter, Gauge, Histogram, type Registry, Summary } from './metrics/user-metrics.ts';
export {
  type MigrateOptions,
  type MigrateResult,
  type MigrationDatabase,
  MigrationError,
  type MigrationLogger,
  migrate,
} from './migrations/migrate.ts';
export { type CronFire, type CronJob, CronScheduler, type CronSchedulerOptions } from './scheduler/cron-scheduler.ts';
export type { FireCoordinator, Scheduler, SchedulerCoordination, SchedulerEnv } from './scheduler/scheduler.ts';
