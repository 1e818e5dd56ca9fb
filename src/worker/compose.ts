import type { Ctx } from './ctx.ts';
import type { Handler, Middleware } from './route.ts';

/**
 * Composes onion-style middlewares around a handler into one function. A
 * handler's returned value (other than `undefined`, or the ctx itself that a
 * chained `ctx.status(…).setHeader(…)` returns) becomes a 200 JSON reply
 * unless the handler already chose a reply.
 */
export function compose(middlewares: readonly Middleware[], handler: Handler): (ctx: Ctx) => Promise<void> {
  const run = async (ctx: Ctx) => {
    const value = await handler(ctx);
    if (value !== undefined && value !== ctx && ctx.reply.kind === 'none') ctx.reply = { kind: 'json', value };
  };
  if (middlewares.length === 0) return run;
  return (ctx) => {
    let last = -1;
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error('next() called more than once');
      last = i;
      const mw = middlewares[i];
      if (mw === undefined) return run(ctx);
      await mw(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
