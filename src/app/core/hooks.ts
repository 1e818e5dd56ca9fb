import { createError, describeValue } from '../../errors/flotilla-error.ts';
import type { Ctx } from './ctx.ts';
import type { ErrorHandler, NotFoundHandler, RequestHook } from './route.ts';

/** The App's replaceable steps of the pipeline: set by `app.setErrorHandler` and `app.setNotFoundHandler`. */
export interface Seams {
  errorHandler?: ErrorHandler;
  notFoundHandler?: NotFoundHandler;
}

/**
 * Runs `onRequest` hooks in order, outermost first, until one chooses a reply
 * (the request then ends with it) or throws. Synchronous while every hook is:
 * routes without hooks, or with synchronous ones, cost no promise.
 *
 * @example
 * const pending = runRequestHooks(entry.hooks, ctx); // undefined, or a promise when a hook is async
 */
export function runRequestHooks(chain: HookChain, ctx: Ctx, from = 0, at = 0): void | Promise<void> {
  for (let i = from; i < chain.length; i++) {
    const hooks = chain[i] as HookChain[number];
    for (let j = i === from ? at : 0; j < hooks.length; j++) {
      if (ctx.reply.kind !== 'none') return;
      const pending = (hooks[j] as (ctx: Ctx) => unknown)(ctx);
      if (typeof (pending as PromiseLike<unknown> | undefined)?.then === 'function') {
        return Promise.resolve(pending).then(() => runRequestHooks(chain, ctx, i, j + 1));
      }
    }
  }
}

/** The `onRequest` hook arrays in force for a route, outermost (the App's) first. */
export type HookChain = readonly (readonly RequestHook[])[];

/** Refuses an `onRequest` hook that is not a function, when it is added rather than at the first request. */
export function checkHook(hook: unknown, owner: string): void {
  if (typeof hook !== 'function') throw createError('FLO_ERR_BAD_HOOK', { owner, got: describeValue(hook) });
}
