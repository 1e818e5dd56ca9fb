import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controller, testApp } from '../helpers/app.ts';

/**
 * What broke: a thrown value that throws when it is read — a null-prototype
 * object (`String()` throws), a throwing `toString`, a Proxy whose traps throw,
 * an Error whose `message` getter throws — made the error boundary itself
 * throw: the request never got an answer and the rejection went unhandled
 * (which ends a Node process). Each is now a 500 problem, logged with the
 * request id.
 */

const hostile: Record<string, () => unknown> = {
  'a null-prototype object': () => Object.create(null),
  'an object whose toString throws': () => ({
    toString() {
      throw new Error('toString');
    },
  }),
  'a Proxy whose traps throw': () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error('get');
        },
        getPrototypeOf() {
          throw new Error('getPrototypeOf');
        },
        ownKeys() {
          throw new Error('ownKeys');
        },
      },
    ),
  'an Error whose message getter throws': () => {
    const error = new Error('x');
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('message');
      },
    });
    return error;
  },
};

test('values that throw when read become 500 problems, for a throw and for a rejection', async (t) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));
  for (const env of ['development', 'production'] as const) {
    const { app, logs } = testApp({ env });
    const routes = Object.entries(hostile).flatMap(([name, value], i) => [
      {
        method: 'GET' as const,
        path: `/throw/${i}`,
        summary: name,
        handler: () => {
          throw value();
        },
      },
      {
        method: 'GET' as const,
        path: `/reject/${i}`,
        summary: name,
        handler: async () => {
          await Promise.resolve();
          throw value();
        },
      },
    ]);
    app.registerController(controller(...routes));
    for (const route of routes) {
      const res = await app.inject(route.path);
      assert.equal(res.statusCode, 500, `${env}: ${route.summary} (${route.path})`);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const body = res.json();
      assert.equal(body.code, 'INTERNAL');
      assert.equal(body.detail, env === 'production' ? 'An internal error occurred.' : 'a value that cannot be shown was thrown (object)');
      const logged = logs.lines.find((l) => l['msg'] === 'request failed' && l['requestId'] === body.requestId);
      assert.equal(logged?.['route'], route.path);
    }
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
});

test('a translator that throws leaves the problem untranslated, and is logged', async () => {
  const { app, logs } = testApp();
  app.setTranslator({
    locales: () => ['en', 'fr'],
    t: () => {
      throw new Error('catalog broken');
    },
  });
  app.registerController(controller({ method: 'GET', path: '/boom', handler: () => Promise.reject(new Error('boom')) }));
  const res = await app.inject({ url: '/boom', headers: { 'accept-language': 'fr' } });
  assert.equal(res.statusCode, 500);
  assert.equal(res.json().detail, 'boom');
  assert.equal(res.headers['content-language'], undefined);
  const logged = logs.lines.find((l) => l['msg'] === 'the translator failed: the problem is sent untranslated');
  assert.equal(logged?.['requestId'], res.json().requestId);
  const throwingLocales = testApp();
  throwingLocales.app.setTranslator({
    locales: () => {
      throw new Error('no locales');
    },
    t: (_locale, key) => key,
  });
  assert.equal((await throwingLocales.app.inject('/nowhere')).statusCode, 404);
});
