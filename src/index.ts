/**
 * flotilla: HTTP services on Node.js that run as a cluster.
 *
 * @example
 * import { App, KError, newPage } from 'flotilla';
 * const app = new App({ serviceName: 'books' });
 * app.registerController({ routes: () => [{ method: 'GET', path: '/hello', handler: () => ({ hello: 'world' }) }] });
 * await app.listen();
 */

export { App, type AppConfig, type AppOptions, type AppRole, type InjectResponse } from './app/app.ts';
export type {
  BodyKind,
  BufferedMultipart,
  FormBody,
  FormLimits,
  MultipartBody,
  MultipartOptions,
  MultipartPart,
} from './app/body.ts';
export type { ClearCookieOptions, CookieOptions, Cookies } from './app/cookies/cookies.ts';
export { Ctx, type RequestState } from './app/ctx.ts';
export {
  type DefineRoute,
  defineRoute,
  type HandlerResult,
  type NoSchemas,
  type Paginated,
  type PathParams,
  type RouteCtx,
  type RouteDefinition,
  type RouteSchemas,
  type TypedRoute,
  withTypeProvider,
} from './app/define-route.ts';
export { defineService, type ServiceApp, type ServiceDefinition, type ServiceSetup, type SettingsOf } from './app/define-service.ts';
export type { OpenApiDocument } from './app/docs/openapi.ts';
export type { SecurityRequirement } from './app/docs/security.ts';
export { type ConnectMiddleware, fromConnect } from './app/from-connect.ts';
export { Group, type GroupArgs, type GroupOptions } from './app/group.ts';
export type { CheckResult, HealthChecker, HealthReport } from './app/health.ts';
export { type HttpCheckOptions, httpCheck } from './app/http-check.ts';
export {
  newPage,
  offsetOf,
  PAGE_DEFAULTS,
  type Page,
  type PageOf,
  type PageQuery,
  pageSchema,
  paginated,
  parsePagination,
  type Repository,
} from './app/pagination.ts';
export { clientAddress, type RateLimitOptions } from './app/rate-limit/policy.ts';
export type { RequestContext } from './app/request-context.ts';
export type { Controller, Handler, HttpMethod, JsonSchema, Middleware, Module, Route, RouteSchema } from './app/route.ts';
export type { ShutdownHook } from './app/shutdown.ts';
export type { SseEvent, SseOptions } from './app/sse.ts';
export type { StartHook } from './app/start-hooks.ts';
export type { StreamSource } from './app/stream-reply.ts';
export type { JsonSchemaToTs, ReplyType, SchemaType, TypeProvider } from './app/type-provider.ts';
export { ConfigError, type ConfigProblem } from './config/config-error.ts';
export { loadConfig } from './config/load-file.ts';
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
export { type CronFire, type CronJob, CronScheduler, type CronSchedulerOptions } from './scheduler/cron-scheduler.ts';
export type { FireCoordinator, Scheduler, SchedulerCoordination, SchedulerEnv } from './scheduler/scheduler.ts';
