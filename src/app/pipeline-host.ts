import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { ResolvedConfig } from '../config/types.ts';
import type { Translator } from '../i18n/translator.ts';
import type { MetricsCollector } from '../metrics/metrics-collector.ts';
import type { WireMetrics } from '../metrics/protocol-metrics.ts';
import { compressionOf } from './compression/compression.ts';
import { CookieSigner } from './cookies/cookie-signer.ts';
import { overloaded } from './core/answer.ts';
import type { CtxScope } from './core/ctx.ts';
import type { HookChain, Seams } from './core/hooks.ts';
import type { PipelineHost, PipelineOverload } from './core/host.ts';
import type { PipelineSteps } from './core/route-steps.ts';
import type { Router } from './core/router.ts';
import { clientStillThere, hooksStep } from './core/steps.ts';
import { corsSteps } from './headers/cors.ts';
import { csrfStep } from './headers/cross-origin.ts';
import { checkHost } from './headers/host-header.ts';
import { securityHeadersStep } from './headers/security-headers.ts';
import { compileTrust } from './headers/trusted-proxy.ts';
import type { Admission } from './overload/admission.ts';
import { shedStep } from './overload/arrival.ts';
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
 * The host of an App's request pipeline (`createRequestHandler`): its built-in steps, listed here in
 * the order they run (see {@link pipelineSteps}), what the config decides once (compression, trusted
 * proxies, cookie signing, sessions) computed at construction, and the App's parts it is given,
 * grouped by concern (`replies`, `observability`, `overload`). What the App replaces later
 * (`host.observability.metrics`, `.tracer`, `host.scope.translator`) are plain fields, read per request.
 *
 * @example
 * const host = appPipelineHost({ config, logger, router, …, tracer, metrics, translator });
 * const handler = createRequestHandler(host);
 */
export function appPipelineHost(parts: PipelineParts): PipelineHost {
  const { config, closingConnections } = parts;
  const overload: PipelineOverload = { retryAfterS: config.overload.retryAfterS, shed: parts.shed };
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
    steps: pipelineSteps(config, parts.admission, overload),
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
    overload,
  };
}

/**
 * The built-in steps of the pipeline, in the order they run: each made by its own folder from the
 * config (`undefined`: off, and not run at all). A new built-in step is written in its folder and
 * listed here; a route's steps are made once, at its registration, and run before its middlewares,
 * body and handler.
 */
function pipelineSteps(config: ResolvedConfig, admission: Admission | undefined, overload: PipelineOverload): PipelineSteps {
  const cors = corsSteps(config.cors);
  const refuse = () => overloaded(overload);
  return {
    arrival: present([securityHeadersStep(config.securityHeaders), checkHost, cors?.arrival, csrfStep(config)]),
    route: [
      // shed before any of the route's work: no hook, no middleware, no body read (`/health` never is)
      (route) => (route.sheddable && admission !== undefined ? shedStep(admission, refuse) : undefined),
      (route, { timeouts }) => (route.timeoutMs > 0 ? timeouts.step(route.timeoutMs) : undefined),
      // a `preHandler` limit runs inside the route's work instead (see router.ts)
      (route) => route.limit,
      (route) => hooksStep(route.hooks),
      () => clientStillThere,
      // an asynchronous schema (a library's async refinement) is awaited; the common path stays synchronous
      ({ validator }) => validator.head,
    ],
    beforeReply: present([cors?.beforeReply]),
  };
}

function present<T>(steps: readonly (T | undefined)[]): T[] {
  return steps.filter((step): step is T => step !== undefined);
}
