import { type TestContext, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import { clientAddress } from '../../../src/app/core/rate-limit-policy.ts';
import type { Route } from '../../../src/app/core/route.ts';
import type { CounterStore, WindowCount } from '../../../src/coordination/counter-store.ts';
import { controller, testApp } from '../../helpers/app.ts';

const route = (path: string, extra: Partial<Route> = {}): Route => ({ method: 'GET', path, handler: () => ({ ok: true }), ...extra });

/** One GET of `url` from each client address in `ips`, in turn (light-my-request's `remoteAddress`); their statuses. */
async function from(app: App, url: string, ips: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const ip of ips) out.push((await app.inject({ method: 'GET', url, remoteAddress: ip })).statusCode);
  return out;
}

/** A memory store that records the keys it is asked to count. */
function recordingStore(keys: string[]): CounterStore {
  const counts = new Map<string, number>();
  return {
    hit(key: string, windowMs: number): WindowCount {
      keys.push(key);
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      return { count, resetMs: windowMs };
    },
    release() {},
    async close() {},
  };
}

test('IPv6 clients in one /56 share a bucket by default, whatever their addresses', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(route('/x', { rateLimit: { max: 5, windowMs: 60_000 } })));
  // six addresses of one /56, written six ways: the sixth request is one too many
  const oneNetwork = [
    '2001:db8:1:ff00::1',
    '2001:db8:1:ff42::7',
    '2001:db8:1:ffff:ffff:ffff:ffff:ffff',
    '2001:0DB8:0001:FF01:0000:0000:0000:0001',
    '2001:db8:1:ff80:1:2:3:4',
    '2001:db8:1:ff00::2',
  ];
  t.assert.deepStrictEqual(await from(app, '/x', oneNetwork), [200, 200, 200, 200, 200, 429]);
  // the next /56, and another network altogether, have budgets of their own
  t.assert.deepStrictEqual(await from(app, '/x', ['2001:db8:1:fe00::1', '2001:db8:1:100::1', '2001:db8:2:ff00::1']), [200, 200, 200]);
});

test('IPv4 clients count by their whole address, one mapped in IPv6 as the IPv4 address', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(route('/x', { rateLimit: { max: 2, windowMs: 60_000 } })));
  t.assert.deepStrictEqual(await from(app, '/x', ['192.0.2.1', '::ffff:192.0.2.1', '192.0.2.1']), [200, 200, 429]);
  // the neighbours of 192.0.2.1 are not grouped with it
  t.assert.deepStrictEqual(await from(app, '/x', ['192.0.2.2', '192.0.2.3']), [200, 200]);
});

test('ipv6Subnet changes the prefix: 64 groups one subnet, 128 counts each address alone', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(
    controller(
      route('/64', { rateLimit: { max: 2, windowMs: 60_000, ipv6Subnet: 64 } }),
      route('/128', { rateLimit: { max: 1, windowMs: 60_000, ipv6Subnet: 128 } }),
    ),
  );
  t.assert.deepStrictEqual(
    await from(app, '/64', ['2001:db8:1:ff42::1', '2001:db8:1:ff42::2', '2001:db8:1:ff42:ffff::3']),
    [200, 200, 429],
  );
  // the next /64 of the same /56 is another client here
  t.assert.deepStrictEqual(await from(app, '/64', ['2001:db8:1:ff43::1']), [200]);
  t.assert.deepStrictEqual(
    await from(app, '/128', ['2001:db8::1', '2001:db8::2', '2001:db8::3', '2001:DB8:0::0001']),
    [200, 200, 200, 429],
  );
});

test("the YAML file's rateLimit.ipv6Subnet sets the App's limit; a group's and a route's limit take their own", async (t: TestContext) => {
  const { app } = testApp({ rateLimit: { max: 1, windowMs: 60_000, ipv6Subnet: 128 } });
  t.assert.equal(app.config.rateLimit?.ipv6Subnet, 128);
  app.registerController(controller(route('/app'), route('/own', { rateLimit: { max: 1, windowMs: 60_000, ipv6Subnet: 48 } })));
  app.group('/g', { rateLimit: { max: 1, windowMs: 60_000 } }).registerController(controller(route('/x')));
  t.assert.deepStrictEqual(await from(app, '/app', ['2001:db8::1', '2001:db8::2', '2001:db8::1']), [200, 200, 429]);
  t.assert.deepStrictEqual(await from(app, '/own', ['2001:db8:1:1::1', '2001:db8:1:ff00::1']), [200, 429]);
  // the group's limit says nothing of ipv6Subnet: the default /56
  t.assert.deepStrictEqual(await from(app, '/g/x', ['2001:db8:0:1::1', '2001:db8:0:2::1']), [200, 429]);
});

test('the store is asked for one canonical key per network, the same in every process', async (t: TestContext) => {
  const keys: string[] = [];
  const { app } = testApp({}, { counterStore: recordingStore(keys) });
  app.registerController(controller(route('/x', { rateLimit: { max: 100, windowMs: 60_000 } })));
  await from(app, '/x', ['2001:DB8:1:FF42::7', '2001:db8:1:ff00:0:0:0:1', '::ffff:192.0.2.1', '192.0.2.1']);
  t.assert.deepStrictEqual(keys, [
    'GET /x|60000|2001:db8:1:ff00::/56',
    'GET /x|60000|2001:db8:1:ff00::/56',
    'GET /x|60000|192.0.2.1',
    'GET /x|60000|192.0.2.1',
  ]);
});

test('a key function of its own is not grouped; it may call clientAddress with the prefix it wants', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(
    controller(
      route('/raw', { rateLimit: { max: 1, windowMs: 60_000, ipv6Subnet: 32, key: (ctx: Ctx) => ctx.ip } }),
      route('/48', { rateLimit: { max: 1, windowMs: 60_000, key: (ctx: Ctx) => clientAddress(ctx, 48) } }),
    ),
  );
  t.assert.deepStrictEqual(await from(app, '/raw', ['2001:db8::1', '2001:db8::2', '2001:db8::1']), [200, 200, 429]);
  t.assert.deepStrictEqual(await from(app, '/48', ['2001:db8:0:1::1', '2001:db8:0:ff00::1']), [200, 429]);
});

test('a bad ipv6Subnet is refused when registered, naming the route or the App', (t: TestContext) => {
  const { app } = testApp();
  for (const bad of [0, 129, 56.5, '56', null]) {
    t.assert.throws(
      () => app.registerController(controller(route('/x', { rateLimit: { max: 1, windowMs: 1_000, ipv6Subnet: bad as number } }))),
      /FLO_ERR_BAD_RATE_LIMIT.*route GET \/x: rateLimit\.ipv6Subnet must be an integer from 1 to 128/,
    );
  }
  t.assert.throws(() => testApp({ rateLimit: { max: 1, windowMs: 1_000, ipv6Subnet: 0 } }), /ipv6Subnet/);
});
