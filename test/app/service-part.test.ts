import { type TestContext, test } from 'node:test';
import type { App } from '../../src/app/app.ts';
import { ServicePart } from '../../src/app/service-part.ts';
import { resolveConfig } from '../../src/config/validate.ts';

const config = resolveConfig({ logging: { level: 'silent' }, shutdown: { timeoutMs: 500 } });

/**
 * What the App has and the primary's part does not: serving and introspecting routes. Anything else a
 * setup may call on its App must exist on the part too, or the service thread would crash on it; this
 * type fails to compile when an App method is added without its counterpart here.
 */
type NotInThePrimary = Exclude<keyof App, keyof ServicePart>;
const absent: Record<NotInThePrimary, true> = {
  engine: true,
  listen: true,
  ready: true,
  inject: true,
  injectWebSocket: true,
  openapi: true,
  metricsPort: true,
  requestRoutes: true,
  socketActivity: true,
  useCertificates: true,
  [Symbol.asyncDispose]: true,
};

test('the primary part publishes through what it was given (the service thread posts to the primary)', (t: TestContext) => {
  const sent: [string, string | Buffer][] = [];
  const part = new ServicePart(config, {}, (topic, payload) => sent.push([topic, payload]));
  part.publish('news', { tick: 1 });
  part.publish('news', Buffer.from([7]));
  t.assert.deepStrictEqual(sent, [
    ['news', '{"tick":1}'],
    ['news', Buffer.from([7])],
  ]);
  t.assert.throws(() => part.publish('', 'x'), /topic/);
});

test('the primary part keeps schedulers and hooks, in registration order, and drops routes', async (t: TestContext) => {
  t.assert.ok(Object.keys(absent).length > 0);
  const part = new ServicePart(config);
  const events: string[] = [];
  part.registerController({ routes: () => [{ method: 'GET', path: '/x', handler: () => 'x' }] });
  part.group('/api').registerController({ routes: () => [{ method: 'GET', path: '/y', handler: () => 'y' }] });
  part.registerHealthChecker({ name: 'db', check: async () => {} });
  part.registerScheduler({ start: () => void events.push('start'), stop: () => void events.push('stop') });
  part.use({ register: (r) => r.onShutdown(() => void events.push('module hook')) });
  part.group('/g').onShutdown(() => void events.push('group hook'));
  t.assert.deepStrictEqual(part.routes, []);
  t.assert.strictEqual(part.role, 'primary');

  await part.start();
  t.assert.deepStrictEqual(events, ['start']);
  await part.close(Date.now() + 1_000);
  t.assert.deepStrictEqual(events, ['start', 'stop', 'module hook', 'group hook']);
  t.assert.strictEqual(part.cleanShutdown, true);
});

test('a hook that outlives the deadline makes the shutdown unclean; its signal aborts', async (t: TestContext) => {
  const part = new ServicePart(config);
  let aborted = false;
  part.onShutdown(
    (signal) =>
      new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve();
        }),
      ),
  );
  await part.close(Date.now() + 100);
  t.assert.strictEqual(aborted, true);
  t.assert.strictEqual(part.cleanShutdown, false);
});

test('prepare() runs the beforeServe hooks once, in order; the shutdown aborts one still running', async (t: TestContext) => {
  const part = new ServicePart(config);
  const events: string[] = [];
  part.beforeServe(() => void events.push('migrate'));
  part.group('/api').beforeServe(() => void events.push('warm'));
  await part.prepare();
  await part.prepare();
  t.assert.deepStrictEqual(events, ['migrate', 'warm']);

  const slow = new ServicePart(config);
  let reason: unknown;
  slow.beforeServe(
    (signal) =>
      new Promise<void>((_, reject) =>
        signal.addEventListener('abort', () => {
          reason = signal.reason;
          reject(signal.reason);
        }),
      ),
  );
  const preparing = slow.prepare();
  await slow.close(Date.now() + 1_000);
  await t.assert.rejects(preparing);
  t.assert.match(String(reason), /shutting down/);
  t.assert.strictEqual(slow.cleanShutdown, true);
});

test('prepare() rejects with a failing beforeServe hook; the later ones do not run', async (t: TestContext) => {
  const part = new ServicePart(config);
  let later = false;
  part.beforeServe(async () => {
    throw new Error('the database refused the migration');
  });
  part.beforeServe(() => {
    later = true;
  });
  await t.assert.rejects(part.prepare(), /refused the migration/);
  t.assert.strictEqual(later, false);
});
