import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { ResolvedConfig } from '../config/types.ts';
import type { Translator } from '../i18n/translator.ts';
import type { MetricsCollector } from '../metrics/metrics-collector.ts';
import type { WireMetrics } from '../metrics/protocol-metrics.ts';
import { compressionOf } from './compression/compression.ts';
import { CookieSigner } from './cookies/cookie-signer.ts';
import type { CtxScope } from './core/ctx.ts';
import type { HookChain, Seams } from './core/hooks.ts';
import type { PipelineHost } from './core/pipeline.ts';
import type { Router } from './core/router.ts';
import { createCors } from './headers/cors.ts';
import { crossOriginCheck } from './headers/cross-origin.ts';
import { securityHeaderList } from './headers/security-headers.ts';
import { compileTrust } from './headers/trusted-proxy.ts';
import type { Admission } from './overload/admission.ts';
import type { InFlight } from './overload/in-flight.ts';
import type { SessionHost } from './sessions/session-host.ts';

/** The App's parts its request pipeline runs on (see `appPipelineHost`). */
export interface PipelineParts {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly router: Router;
  readonly inFlight: InFlight;
  /** Aborts when the App starts draining. */
  readonly drain: AbortSignal;
  /** Aborts when the shutdown deadline passes. */
  readonly deadline: AbortSignal;
  readonly requestHooks: HookChain[number];
  readonly seams: Seams;
  readonly wire: WireMetrics | undefined;
  readonly admission: Admission | undefined;
  readonly shed: Counter<'reason'> | undefined;
  /** What `ctx.session()` reads: the store (opened on first use) and `sessions.*`. */
  readonly sessions: SessionHost;
  /** The lifecycle's: the server is closing its connections (a reply then says `Connection: close`). */
  closingConnections(): boolean;
  /** The first ones: `app.setMetricsCollector`, `setTracer` and `setTranslator` replace them in the host. */
  readonly metrics: MetricsCollector | undefined;
  readonly tracer: Tracer;
  readonly translator: Translator | undefined;
}

/**
 * The host of an App's request pipeline (`createRequestHandler`): what the config decides once (CORS,
 * the cross-origin check, security headers, compression, trusted proxies, cookie signing, sessions)
 * computed here, at construction, and the App's parts it is given, grouped by concern (`security`,
 * `replies`, `observability`, `overload`). What the App replaces later (`host.observability.metrics`,
 * `.tracer`, `host.scope.translator`) are plain fields, read per request.
 *
 * @example
 * const host = appPipelineHost({ config, logger, router, …, tracer, metrics, translator });
 * const handler = createRequestHandler(host);
 */
export function appPipelineHost(parts: PipelineParts): PipelineHost {
  const { config, closingConnections } = parts;
  const scope: CtxScope = {
    logger: parts.logger,
    deadline: parts.deadline,
    cookieSigner: config.cookies.secrets.length > 0 ? new CookieSigner(config.cookies.secrets) : undefined,
    trustProxy: compileTrust(config.trustProxy, config.trustProxyHeader),
    sessions: parts.sessions,
    translator: parts.translator,
  };
  return {
    router: parts.router,
    requestHooks: parts.requestHooks,
    seams: parts.seams,
    scope,
    inFlight: parts.inFlight,
    security: {
      cors: createCors(config.cors),
      crossOrigin: config.csrf.enabled
        ? crossOriginCheck([...config.csrf.trustedOrigins, ...config.cors.origins.filter((o) => o !== '*')])
        : undefined,
      headers: securityHeaderList(config.securityHeaders),
    },
    replies: {
      get closingConnections() {
        return closingConnections();
      },
      drain: parts.drain,
      compression: compressionOf(config.compression),
      production: config.env === 'production',
    },
    observability: {
      logger: parts.logger,
      logRequests: config.logging.requests,
      wire: parts.wire,
      metrics: parts.metrics,
      tracer: parts.tracer,
    },
    overload: { admission: parts.admission, retryAfterS: config.overload.retryAfterS, shed: parts.shed },
  };
}
