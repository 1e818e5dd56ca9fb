import { connect } from 'node:net';
import { type TestContext, test } from 'node:test';
import { freePort } from '../../../tools/throwaway-server.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('beforeServe hooks run once, in registration order, before the App binds', async (t: TestContext) => {
  const { app } = testApp();
  const events: string[] = [];
  let readyEarly = false;
  void app.ready().then(() => events.push('ready'));
  app.beforeServe(async () => {
    events.push('first');
    await new Promise((r) => setTimeout(r, 20));
  });
  app.group('/api').beforeServe((signal) => {
    events.push(`second aborted=${signal.aborted}`);
  });
  app.use({ register: (r) => r.beforeServe(() => void events.push('module')) });
  app.beforeServe(async () => {
    readyEarly = events.includes('ready');
  });
  app.registerController(controller({ method: 'GET', path: '/', handler: () => ({ ok: true }) }));
  const port = await serve(t, app);
  t.assert.deepStrictEqual(events, ['first', 'second aborted=false', 'module', 'ready']);
  t.assert.strictEqual(readyEarly, false, 'ready() resolves only after the hooks');
  t.assert.strictEqual((await app.inject('/')).statusCode, 200);
  t.assert.ok(await accepting(port));
});

test('the server does not accept connections while a beforeServe hook runs', async (t: TestContext) => {
  const port = await freePort();
  const { app } = testApp({ port });
  const release = gate();
  const entered = gate();
  app.beforeServe(async () => {
    entered.resolve();
    await release.promise;
  });
  const listening = app.listen();
  t.after(async () => {
    await app.close();
    await listening.catch(() => {});
  });
  await entered.promise;
  t.assert.strictEqual(await accepting(port), false, 'nothing listens on the port yet');
  let readied = false;
  void app.ready().then(() => {
    readied = true;
  });
  await new Promise((r) => setImmediate(r));
  t.assert.strictEqual(readied, false);
  release.resolve();
  t.assert.strictEqual((await app.ready()).port, port);
  t.assert.ok(await accepting(port));
});

test('a failing beforeServe hook makes listen() and ready() reject with its error; nothing listens', async (t: TestContext) => {
  const { app } = testApp();
  const later: string[] = [];
  app.beforeServe(() => {
    throw new Error('migration 0002 failed');
  });
  app.beforeServe(() => void later.push('ran'));
  await t.assert.rejects(app.listen(), /migration 0002 failed/);
  await t.assert.rejects(app.ready(), /migration 0002 failed/);
  t.assert.deepStrictEqual(later, [], 'the hooks after the failing one do not run');
});

test('close() while a beforeServe hook runs aborts its signal; listen() settles', async (t: TestContext) => {
  const { app } = testApp();
  const entered = gate();
  let reason: unknown;
  app.beforeServe(
    (signal) =>
      new Promise<void>((_, reject) => {
        entered.resolve();
        signal.addEventListener('abort', () => {
          reason = signal.reason;
          reject(signal.reason);
        });
      }),
  );
  const listening = app.listen();
  await entered.promise;
  await app.close();
  await t.assert.rejects(listening);
  t.assert.match(String(reason), /closing/);
});

test('a cluster worker (runSchedulers: false) records no beforeServe hook', async (t: TestContext) => {
  const { app } = testApp({}, { runSchedulers: false, role: 'worker' });
  let ran = false;
  app.beforeServe(() => {
    ran = true;
  });
  await serve(t, app);
  t.assert.strictEqual(ran, false);
});

test('beforeServe refuses what is not a function, at registration', (t: TestContext) => {
  const { app } = testApp();
  t.assert.throws(() => app.beforeServe('migrate' as never), { code: 'FLO_ERR_BAD_HOOK' });
});
