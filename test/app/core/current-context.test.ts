import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentContext } from '../../../src/index.ts';
import { controller, testApp } from '../../helpers/app.ts';

/** A repository function that takes no ctx: what `currentContext()` is for. */
async function lookup(): Promise<{ id: string | undefined; state: unknown }> {
  await sleep(5);
  const context = currentContext();
  context?.logger.info('looked up');
  return { id: context?.requestId, state: context?.state['user'] };
}

test('currentContext() is the request’s, across awaits and timers, in its middlewares and its error handler', async () => {
  const { app, logs } = testApp();
  const errors: (string | undefined)[] = [];
  app.setErrorHandler((error) => {
    errors.push(currentContext()?.requestId);
    throw error;
  });
  app.registerController(
    controller(
      {
        method: 'GET',
        path: '/a',
        middlewares: [
          async (ctx, next) => {
            ctx.state['user'] = 'ann';
            await next();
          },
        ],
        handler: () => lookup(),
      },
      {
        method: 'GET',
        path: '/boom',
        handler: async () => {
          await sleep(1);
          throw new Error('boom');
        },
      },
    ),
  );
  const [one, two] = await Promise.all([
    app.inject({ url: '/a', headers: { 'x-request-id': 'req-one' } }),
    app.inject({ url: '/a', headers: { 'x-request-id': 'req-two' } }),
  ]);
  assert.deepEqual(one?.json(), { id: 'req-one', state: 'ann' });
  assert.deepEqual(two?.json(), { id: 'req-two', state: 'ann' }, 'concurrent requests keep their own');
  assert.ok(logs.lines.some((l) => l['msg'] === 'looked up' && l['requestId'] === 'req-one'));
  assert.equal((await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-boom' } })).statusCode, 500);
  assert.deepEqual(errors, ['req-boom']);
  assert.equal(currentContext(), undefined, 'none outside a request');
});
