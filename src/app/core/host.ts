import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { MetricsCollector } from '../../metrics/metrics-collector.ts';
import type { WireMetrics } from '../../metrics/protocol-metrics.ts';
import type { InFlight } from '../overload/in-flight.ts';
import type { CtxScope } from './ctx.ts';
import type { HookChain, Seams } from './hooks.ts';
import type { ReplyHost } from './reply.ts';
import type { PipelineSteps } from './route-steps.ts';
import type { Router } from './router.ts';

/**
 * What the pipeline reads from its App on every request, grouped by concern. The groups are built
 * once with the host and never replaced: the pipeline reads a group once where it needs several of
 * its fields.
 */
export interface PipelineHost {
  readonly router: Router;
  /** The App-level `onRequest` hooks (they also run for a path no route matches). */
  readonly requestHooks: HookChain[number];
  readonly seams: Seams;
  readonly scope: CtxScope;
  readonly inFlight: InFlight;
  /** The built-in steps, in order: every request's, each route's, and those before a reply is written. */
  readonly steps: PipelineSteps;
  readonly replies: PipelineReplies;
  readonly observability: PipelineObservability;
  readonly overload: PipelineOverload;
}

/** What writing a reply reads (see `ReplyHost`), and whether a problem hides its internal details (`env: production`). */
export interface PipelineReplies extends ReplyHost {
  readonly production: boolean;
}

/** The request's log line, metrics and trace. */
export interface PipelineObservability {
  readonly logger: Logger;
  readonly logRequests: boolean;
  /** Requests counted and logged by protocol (an App with `tls` or `http2`); undefined otherwise. */
  readonly wire: WireMetrics | undefined;
  /** Replaced by `app.setMetricsCollector`. */
  metrics: MetricsCollector | undefined;
  /** Replaced by `app.setTracer`. */
  tracer: Tracer;
}

/** Load shedding (`overload`) and what the pipeline's own 503s count. */
export interface PipelineOverload {
  /** The `Retry-After` of an `OVERLOADED` 503, in seconds (`overload.retryAfterS`). */
  readonly retryAfterS: number;
  /** `flotilla_requests_shed_total{reason}`; undefined without metrics. */
  readonly shed: Counter<'reason'> | undefined;
}
