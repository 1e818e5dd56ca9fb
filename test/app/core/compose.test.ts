import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compose } from '../../../src/app/core/compose.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';

/** Just what compose touches of a Ctx. */
const fakeCtx = () => ({ reply: { kind: 'none' } }) as unknown as Ctx;

test('a synchronous handler without middlewares runs without a promise, its value becoming the JSON reply', () => {
  const ctx = fakeCtx();
  const outcome = compose([], () => ({ id: 1 }))(ctx);
  assert.equal(outcome, undefined);
  assert.deepEqual(ctx.reply, { kind: 'json', value: { id: 1 } });
});

test('an async handler, or one returning any thenable, is awaited and its value adopted', async () => {
  // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is exactly what is tested
  const thenable = { then: (resolve: (v: string) => void) => resolve('thenable') };
  for (const handler of [async () => 'async', () => thenable]) {
    const ctx = fakeCtx();
    const outcome = compose([], handler)(ctx);
    assert.ok(outcome instanceof Promise);
    await outcome;
    assert.equal(ctx.reply.kind, 'json');
  }
});

test('undefined, the ctx itself and a reply already chosen are not replaced', async () => {
  const none = fakeCtx();
  compose([], () => undefined)(none);
  assert.deepEqual(none.reply, { kind: 'none' });
  const chained = fakeCtx();
  compose([], (ctx) => ctx)(chained);
  assert.deepEqual(chained.reply, { kind: 'none' });
  const chosen = fakeCtx();
  await compose([], async (ctx) => {
    ctx.reply = { kind: 'raw', body: 'x', type: 'text/plain' };
    return 'ignored';
  })(chosen);
  assert.equal(chosen.reply.kind, 'raw');
});

test('a synchronous throw escapes synchronously; with middlewares everything is one promise', async () => {
  assert.throws(
    () =>
      compose([], () => {
        throw new Error('boom');
      })(fakeCtx()),
    /boom/,
  );
  const order: string[] = [];
  const outcome = compose(
    [
      async (_ctx, next) => {
        order.push('in');
        await next();
        order.push('out');
      },
    ],
    () => {
      order.push('handler');
      return 1;
    },
  )(fakeCtx());
  assert.ok(outcome instanceof Promise);
  await outcome;
  assert.deepEqual(order, ['in', 'handler', 'out']);
});
