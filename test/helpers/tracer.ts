import {
  type Attributes,
  type Context,
  type Exception,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanOptions,
  type SpanStatus,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/** A span that keeps what was done to it. */
export interface RecordedSpan extends Span {
  name: string;
  readonly kind: SpanKind | undefined;
  readonly attributes: Attributes;
  readonly parent: Context | undefined;
  status: SpanStatus | undefined;
  readonly exceptions: Exception[];
  ended: boolean;
}

/** A Tracer (from `@opentelemetry/api` alone) that records every span it starts. */
export function recordingTracer(): Tracer & { spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  let next = 1;
  const startSpan = (name: string, options: SpanOptions = {}, parent?: Context): RecordedSpan => {
    const id = (next++).toString(16).padStart(16, '0');
    const context: SpanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: id, traceFlags: TraceFlags.SAMPLED };
    const span: RecordedSpan = {
      name,
      kind: options.kind,
      attributes: { ...options.attributes },
      parent,
      status: undefined,
      exceptions: [],
      ended: false,
      spanContext: () => context,
      setAttribute(key, value) {
        span.attributes[key] = value;
        return span;
      },
      setAttributes(attributes) {
        Object.assign(span.attributes, attributes);
        return span;
      },
      addEvent: () => span,
      addLink: () => span,
      addLinks: () => span,
      setStatus(status) {
        span.status = status;
        return span;
      },
      updateName(newName) {
        span.name = newName;
        return span;
      },
      end() {
        span.ended = true;
      },
      isRecording: () => !span.ended,
      recordException(exception) {
        span.exceptions.push(exception);
      },
    };
    spans.push(span);
    return span;
  };
  const tracer = {
    spans,
    startSpan,
    startActiveSpan: ((name: string, ...args: unknown[]) => {
      const fn = args.at(-1) as (span: Span) => unknown;
      return fn(startSpan(name));
    }) as Tracer['startActiveSpan'],
  };
  return tracer;
}

export { trace };
