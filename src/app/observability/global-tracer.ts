import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { otel } from '../../utils/otel-api.ts';

const { trace } = otel;

/**
 * The tracer of an App (and of the primary's service part) until `setTracer`
 * replaces it: each span is started by the tracer of the provider registered
 * globally at that moment, so an SDK registered after the App was built
 * (in the setup, or by a module imported later) records the App's spans too.
 * With one copy of `@opentelemetry/api` (flotilla's is a peer dependency),
 * `trace.getTracer` already returns a proxy that follows the provider; the
 * check here also covers a provider registered through another copy, whose
 * global registration this copy then returns. The provider is compared on
 * each span (a property read); the tracer is looked up again only when it
 * changed.
 *
 * @example
 * const tracer = new GlobalTracer('books');
 * trace.setGlobalTracerProvider(provider); // later: tracer.startSpan('GET') is the provider's span
 */
export class GlobalTracer implements Tracer {
  readonly #name: string;
  #provider: TracerProvider | undefined;
  #tracer: Tracer | undefined;

  constructor(name: string) {
    this.#name = name;
  }

  startSpan(...args: Parameters<Tracer['startSpan']>): ReturnType<Tracer['startSpan']> {
    return this.#current().startSpan(...args);
  }

  startActiveSpan: Tracer['startActiveSpan'] = ((...args: unknown[]) =>
    (this.#current().startActiveSpan as (...a: unknown[]) => unknown)(...args)) as Tracer['startActiveSpan'];

  #current(): Tracer {
    const provider = trace.getTracerProvider();
    if (provider !== this.#provider || this.#tracer === undefined) {
      this.#provider = provider;
      this.#tracer = provider.getTracer(this.#name);
    }
    return this.#tracer;
  }
}
