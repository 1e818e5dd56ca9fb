import { otel } from '../../utils/otel-api.ts';

const { trace } = otel;

interface Flushable {
  forceFlush(): Promise<void>;
}

/**
 * The flush of the tracer provider registered globally (an SDK's, behind the
 * API's proxy), or undefined when there is none or it cannot flush. The
 * shutdown sequence calls it after the hooks, so that the spans an SDK still
 * batches are exported before the process exits.
 *
 * @example
 * const flush = traceFlush();
 * if (flush !== undefined) await flush();
 */
export function traceFlush(): (() => Promise<void>) | undefined {
  let provider: unknown = trace.getTracerProvider();
  // the API's ProxyTracerProvider (of whichever copy registered it) holds the SDK's provider
  const proxy = provider as { getDelegate?: () => unknown };
  if (typeof proxy.getDelegate === 'function') provider = proxy.getDelegate();
  const flushable = provider as Partial<Flushable> | undefined;
  if (typeof flushable?.forceFlush !== 'function') return undefined;
  return () => (flushable as Flushable).forceFlush();
}
