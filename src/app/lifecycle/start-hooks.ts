import { createError, describeValue } from '../../errors/flotilla-error.ts';

/**
 * Work that must be done once per process tree before any request is served
 * (`app.beforeServe(hook)`): schema migrations, a cache warmed from a
 * database. `signal` aborts when the shutdown begins while it runs.
 */
export type StartHook = (signal: AbortSignal) => void | Promise<void>;

/** Apps that run no hook of their own (cluster workers) but whose service registered some. */
const noted = new WeakSet<object>();

/** Notes that the service registered `beforeServe` hooks on `app`, which runs none itself (a cluster worker). */
export function noteStartHooks(app: object): void {
  noted.add(app);
}

/**
 * Whether a cluster worker's service registered `beforeServe` hooks: the worker then listens only once
 * the primary's service thread ran them (`flotilla:await-serve`, `flotilla:serve`).
 *
 * @example
 * if (awaitsStartHooks(app)) await primaryServes();
 */
export function awaitsStartHooks(app: object): boolean {
  return noted.has(app);
}

/** Refuses a hook that is not a function, when it is registered rather than when it would run. */
export function checkStartHook(hook: unknown): asserts hook is StartHook {
  if (typeof hook !== 'function') throw createError('FLO_ERR_BAD_HOOK', { owner: 'beforeServe', got: describeValue(hook) });
}

/**
 * Runs the hooks one after the other, in registration order; the first that
 * throws (or rejects) stops the sequence and its error is thrown: nothing is
 * served on a half-prepared dependency. An abort of `signal` between hooks
 * stops the sequence too.
 *
 * @example
 * await runStartHooks(hooks, controller.signal);
 */
export async function runStartHooks(hooks: readonly StartHook[], signal: AbortSignal): Promise<void> {
  for (const hook of hooks) {
    signal.throwIfAborted();
    await hook(signal);
  }
}
