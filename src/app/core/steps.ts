import { ClientGoneError, clientGone } from './client-gone.ts';
import { type Ctx, isExpired } from './ctx.ts';
import { type HookChain, runRequestHooks } from './hooks.ts';

/**
 * A step of the request pipeline: it runs on the request's `Ctx` and returns nothing, or a promise
 * while it waits (a count kept elsewhere, an asynchronous hook). It may choose the reply
 * (`ctx.reply`), which ends the steps, or throw, which `fail` answers.
 */
export type Step = (ctx: Ctx) => void | Promise<void>;

/**
 * Runs a route's steps in order, each only while the request has no reply yet and has not timed
 * out. Synchronous while every step is: no promise, no closure on the common path.
 *
 * @example
 * const pending = runSteps(entry.steps, ctx); // undefined, or a promise when a step waits
 */
export function runSteps(steps: readonly Step[], ctx: Ctx, from = 0): void | Promise<void> {
  for (let i = from; i < steps.length; i++) {
    if (ctx.reply.kind !== 'none' || isExpired(ctx)) return;
    const pending = (steps[i] as Step)(ctx);
    if (pending !== undefined) return pending.then(() => runSteps(steps, ctx, i + 1));
  }
}

/** The route's `onRequest` hooks as a step: the App's, each enclosing group's, its own (see `runRequestHooks`). */
export function hooksStep(hooks: HookChain): Step {
  return (ctx) => runRequestHooks(hooks, ctx);
}

/**
 * The client still there before the route's work starts: a request whose client left is not run,
 * answered with nothing (499 in its log line), and counted (`fail` sees the `ClientGoneError`).
 */
export function clientStillThere(ctx: Ctx): void {
  if (clientGone(ctx.res)) throw new ClientGoneError(true);
}
