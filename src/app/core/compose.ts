import { createError } from '../../errors/flotilla-error.ts';
import { isStreamSource } from '../streams/stream-reply.ts';
import type { Ctx } from './ctx.ts';
import type { Handler, Middleware } from './route.ts';

/** A route's middlewares and handler as one step; synchronous when all of it is. */
export type RouteRun = (ctx: Ctx) => void | Promise<void>;

/**
 * Composes onion-style middlewares around a handler into one function. A
 * handler's returned value (other than `undefined`, or the ctx itself that a
 * chained `ctx.status(…).setHeader(…)` returns) becomes a 200 JSON reply
 * unless the handler already chose a reply. A synchronous handler without
 * middlewares runs without a promise: most routes cost no microtask.
 */
export function compose(middlewares: readonly Middleware[], handler: Handler): RouteRun {
  const run = (ctx: Ctx): void | Promise<void> => adoptResult(ctx, handler(ctx));
  if (middlewares.length === 0) return run;
  return (ctx) => {
    let last = -1;
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw createError('FLO_ERR_NEXT_TWICE');
      last = i;
      const mw = middlewares[i];
      if (mw === undefined) return run(ctx);
      await mw(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}

/**
 * A handler's result as the reply (see `compose`), once settled: synchronous
 * for a value, a promise for a promise.
 */
export function adoptResult(ctx: Ctx, value: unknown): void | Promise<void> {
  if (isThenable(value)) return Promise.resolve(value).then((settled) => adopt(ctx, settled));
  adopt(ctx, value);
}

function adopt(ctx: Ctx, value: unknown): void {
  if (value === undefined || value === ctx || ctx.reply.kind !== 'none') return;
  // a returned stream is streamed, as `ctx.send(stream)` would
  ctx.reply = isStreamSource(value) ? { kind: 'stream', source: value, type: 'application/octet-stream' } : { kind: 'json', value };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
