/**
 * Tracing overhead: flotilla full, but with `app.setTracer(...)` given a tracer
 * that does nothing at all (the App has no switch to turn tracing off). The
 * difference to `flotilla-full` is what the default tracer costs.
 */
import { INVALID_SPAN_CONTEXT, type Span, type Tracer, trace } from '@opentelemetry/api';
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

const span: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
const noopTracer: Tracer = {
  startSpan: () => span,
  startActiveSpan: (_name: string, ...rest: unknown[]) => (rest.at(-1) as (s: Span) => unknown)(span),
} as Tracer;

await runStandalone(itemsConfig(portArg()), (app) => app.setTracer(noopTracer));
