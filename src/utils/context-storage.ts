import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What `currentContext()` reads (src/app/core/current-context.ts): the scope of
 * the request or the scheduled job's run the code is called in, kept by
 * `AsyncLocalStorage` across its awaits, timers and callbacks. A scope builds
 * its context on first read only (`context()`), so a request whose code never
 * asks pays one `run` and nothing more (bench/results/web-kit-cost.md).
 * It lives in utils so that the App and the scheduler, which know nothing of
 * each other, both enter it.
 *
 * @example
 * runInScope({ context: () => ({ requestId: 'job:report:1', logger, signal, otel }) }, () => job.run(signal, fire));
 */
export interface ContextScope<C = unknown> {
  context(): C;
}

const storage = new AsyncLocalStorage<ContextScope>();

/** Calls `fn(...args)` with `scope` current for everything it starts, synchronously or not. */
export function runInScope<A extends unknown[], R>(scope: ContextScope, fn: (...args: A) => R, ...args: A): R {
  return storage.run(scope, fn, ...args);
}

/** The current scope's context; `undefined` outside any. */
export function scopeContext(): unknown {
  return storage.getStore()?.context();
}
