import { type TestContext, test } from 'node:test';
import { App } from '../../../src/app/app.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { Route } from '../../../src/app/core/route.ts';
import type { CounterStore, WindowCount } from '../../../src/coordination/counter-store.ts';
import { controller, testApp } from '../../helpers/app.ts';
import { sink } from '../../helpers/sink.ts';

const ok = () => ({ ok: true });
const route = (path: string, extra: Partial<Route> = {}): Route => ({ method: 'GET', path, handler: ok, ...extra });

/** `n` GETs of `url` in turn, from the client address `ip` (light-my-request's `remoteAddress`). */
async function hits(app: App, url: string, n: number, ip = '127.0.0.1') {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await app.inject({ method: 'GET', url, remoteAddress: ip }));
  return out;
}
const statuses = (replies: { statusCode: number }[]) => replies.map((r) => r.statusCode);

test('a route with a limit admits max requests per client address, with the headers, then answers the 429 problem', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(route('/books/:id', { rateLimit: { max: 3, windowMs: 60_000 } })));
  const replies = await hits(app, '/books/7', 4);
  t.assert.deepStrictEqual(statuses(replies), [200, 200, 200, 429]);
  t.assert.deepStrictEqual(
    replies.map((r) => r.headers['ratelimit']),
    ['"GET /books/:id";r=2;t=60', '"GET /books/:id";r=1;t=60', '"GET /books/:id";r=0;t=60', '"GET /books/:id";r=0;t=60'],
  );
  for (const r of replies) t.assert.equal(r.headers['ratelimit-policy'], '"GET /books/:id";q=3;w=60');
  const refused = replies[3];
  t.assert.ok(refused);
  t.assert.equal(refused.headers['retry-after'], '60');
  t.assert.equal(refused.headers['content-type'], 'application/problem+json');
  const problem = refused.json();
  t.assert.equal(problem.code, 'RATE_LIMITED');
  t.assert.equal(problem.status, 429);
  t.assert.equal(problem.title, 'Too Many Requests');
  t.assert.equal(problem.type, 'urn:flotilla:problem:rate-limited');
  t.assert.match(problem.detail, /^more than 3 requests in 60000 ms: retry in 60 s$/);
  // another client has its own budget; a route without a limit, none at all
  t.assert.equal((await hits(app, '/books/7', 1, '10.0.0.2'))[0]?.statusCode, 200);
});

test('a refused request runs none of the route: no hook, no middleware, no handler', async (t: TestContext) => {
  const { app } = testApp();
  const ran: string[] = [];
  app.onRequest(() => {
    ran.push('app hook');
  });
  app.registerController(
    controller(
      route('/x', {
        rateLimit: { max: 1, windowMs: 60_000 },
        onRequest: [() => void ran.push('route hook')],
        middlewares: [
          async (_ctx, next) => {
            ran.push('middleware');
            await next();
          },
        ],
        handler: () => {
          ran.push('handler');
          return 1;
        },
      }),
    ),
  );
  await hits(app, '/x', 1);
  t.assert.deepStrictEqual(ran, ['app hook', 'route hook', 'middleware', 'handler']);
  ran.length = 0;
  t.assert.deepStrictEqual(statuses(await hits(app, '/x', 1)), [429]);
  t.assert.deepStrictEqual(ran, []);
});

test("a group's limit is shared by its routes and subgroups; a route's own overrides it; false exempts", async (t: TestContext) => {
  const { app } = testApp();
  const api = app.group('/api', { rateLimit: { max: 2, windowMs: 60_000 } });
  api.registerController(
    controller(route('/a'), route('/b'), route('/own', { rateLimit: { max: 5, windowMs: 1_000 } }), route('/free', { rateLimit: false })),
  );
  api.group('/v2').registerController(controller(route('/c')));
  app.registerController(controller(route('/outside')));
  t.assert.deepStrictEqual(
    statuses([...(await hits(app, '/api/a', 1)), ...(await hits(app, '/api/b', 1)), ...(await hits(app, '/api/v2/c', 1))]),
    [200, 200, 429],
  );
  const [aReply] = await hits(app, '/api/a', 1);
  t.assert.equal(aReply?.headers['ratelimit-policy'], '"/api";q=2;w=60');
  t.assert.deepStrictEqual(statuses(await hits(app, '/api/own', 5)), [200, 200, 200, 200, 200]);
  const free = await hits(app, '/api/free', 5);
  t.assert.deepStrictEqual(statuses(free), [200, 200, 200, 200, 200]);
  t.assert.equal(free[0]?.headers['ratelimit'], undefined, 'no headers where no limit applies');
  t.assert.equal((await hits(app, '/outside', 1))[0]?.headers['ratelimit'], undefined);
  // a group can also exempt its routes from the App's limit, and take middlewares after its options
  const seen: string[] = [];
  const open = app.group('/open', { rateLimit: false }, async (_ctx, next) => {
    seen.push('mw');
    await next();
  });
  open.registerController(controller(route('/x')));
  t.assert.equal((await hits(app, '/open/x', 1))[0]?.statusCode, 200);
  t.assert.deepStrictEqual(seen, ['mw']);
});

test("the App's limit (config rateLimit) covers every route but /health and the docs, and takes a key function in code", async (t: TestContext) => {
  const app = new App(
    { port: 0, logging: { level: 'silent' }, rateLimit: { max: 2, windowMs: 60_000, key: (ctx: Ctx) => String(ctx.headers['x-api-key']) } },
    { handleSignals: false },
  );
  app.registerController(controller(route('/a'), route('/b')));
  const as = (key: string, url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  t.assert.deepStrictEqual(
    statuses([await as('k1', '/a'), await as('k1', '/b'), await as('k1', '/a'), await as('k2', '/a')]),
    [200, 200, 429, 200],
  );
  t.assert.equal((await as('k1', '/a')).headers['ratelimit-policy'], '"default";q=2;w=60');
  for (let i = 0; i < 5; i++) t.assert.equal((await as('k1', '/health')).statusCode, 200);
  for (let i = 0; i < 5; i++) t.assert.equal((await as('k1', '/docs/openapi.json')).statusCode, 200);
  t.assert.equal(app.config.rateLimit?.max, 2, 'the key is not part of the resolved config');
  t.assert.equal('key' in (app.config.rateLimit ?? {}), false);
});

test('a key function returning undefined exempts the request; one that throws or returns a non-string is a 500, logged', async (t: TestContext) => {
  const logs = sink();
  const app = new App({ port: 0, env: 'production' }, { handleSignals: false, logStream: logs });
  app.registerController(
    controller(
      route('/maybe', { rateLimit: { max: 1, windowMs: 60_000, key: (ctx) => (ctx.headers['x-internal'] ? undefined : 'client') } }),
      route('/throws', {
        rateLimit: {
          max: 1,
          windowMs: 60_000,
          key: () => {
            throw new Error('secret detail');
          },
        },
      }),
      route('/number', { rateLimit: { max: 1, windowMs: 60_000, key: (() => 42) as never } }),
    ),
  );
  for (let i = 0; i < 3; i++) t.assert.equal((await app.inject({ url: '/maybe', headers: { 'x-internal': '1' } })).statusCode, 200);
  t.assert.equal((await app.inject('/maybe')).statusCode, 200);
  t.assert.equal((await app.inject('/maybe')).statusCode, 429);
  const thrown = await app.inject('/throws');
  t.assert.equal(thrown.statusCode, 500);
  t.assert.doesNotMatch(thrown.body, /secret detail/);
  const number = await app.inject('/number');
  t.assert.equal(number.statusCode, 500);
  const failures = logs.lines.filter((l) => l['msg'] === 'request failed').map((l) => (l['err'] as { message: string }).message);
  t.assert.deepStrictEqual(failures, [
    'secret detail',
    'the rateLimit key of route /number returned number 42: expected a string, or undefined to exempt',
  ]);
});

/** A store that fails every hit, as an unreachable coordinator or a primary that does not answer. */
const failing = (async: boolean): CounterStore => ({
  hit(): WindowCount | Promise<WindowCount> {
    if (async) return Promise.reject(new Error('store down'));
    throw new Error('store down');
  },
  release: () => {},
  close: async () => {},
});

for (const async of [false, true]) {
  test(`a store that fails${async ? ' (asynchronously)' : ''}: open admits without the headers, closed answers 503; counted, logged once`, async (t: TestContext) => {
    const logs = sink();
    const app = new App({ port: 0 }, { handleSignals: false, logStream: logs, counterStore: failing(async) });
    app.registerController(
      controller(
        route('/open', { rateLimit: { max: 1, windowMs: 1_000 } }),
        route('/closed', { rateLimit: { max: 1, windowMs: 1_000, onStoreError: 'closed' } }),
      ),
    );
    const open = await hits(app, '/open', 3);
    t.assert.deepStrictEqual(statuses(open), [200, 200, 200]);
    t.assert.equal(open[0]?.headers['ratelimit'], undefined);
    const closed = await hits(app, '/closed', 2);
    t.assert.deepStrictEqual(statuses(closed), [503, 503]);
    t.assert.equal(closed[0]?.json().code, 'UNAVAILABLE');
    t.assert.equal(closed[0]?.headers['retry-after'], '1');
    const metrics = await app.registry.getSingleMetricAsString('flotilla_rate_limit_requests_total');
    t.assert.match(metrics, /flotilla_rate_limit_requests_total\{route="\/open",result="failed-open"\} 3/);
    t.assert.match(metrics, /flotilla_rate_limit_requests_total\{route="\/closed",result="failed-closed"\} 2/);
    const warned = logs.lines.filter((l) => String(l['msg']).startsWith('rate limit not counted'));
    t.assert.deepStrictEqual(
      warned.map((l) => [l['route'], l['onStoreError']]),
      [
        ['/open', 'open'],
        ['/closed', 'closed'],
      ],
      'one line per route for a burst of failures',
    );
  });
}

test('the decisions are counted by route template, never by key; every result starts at 0', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(route('/users/:id', { rateLimit: { max: 1, windowMs: 60_000 } })));
  await hits(app, '/users/1', 3);
  await hits(app, '/users/2', 1, '10.9.9.9');
  const text = await app.registry.getSingleMetricAsString('flotilla_rate_limit_requests_total');
  t.assert.match(text, /\{route="\/users\/:id",result="allowed"\} 2\n/);
  t.assert.match(text, /\{route="\/users\/:id",result="limited"\} 2\n/);
  t.assert.match(text, /\{route="\/users\/:id",result="failed-open"\} 0/);
  t.assert.doesNotMatch(text, /127\.0\.0\.1|10\.9\.9\.9/);
});

test('a route without a limit costs no store: none is opened, and no metric registered', async (t: TestContext) => {
  let opened = 0;
  const store: CounterStore = {
    hit: () => {
      opened++;
      return { count: 1, resetMs: 1 };
    },
    release: () => {},
    close: async () => {},
  };
  const { app } = testApp({}, { counterStore: store });
  app.registerController(controller(route('/plain')));
  await hits(app, '/plain', 3);
  t.assert.equal(opened, 0);
  t.assert.equal(app.registry.getSingleMetric('flotilla_rate_limit_requests_total'), undefined);
});

test('bad options are refused when registered, naming the route, group or App', (t: TestContext) => {
  const { app } = testApp();
  t.assert.throws(
    () => app.registerController(controller(route('/x', { rateLimit: { max: 0, windowMs: 1_000 } }))),
    /FLO_ERR_BAD_RATE_LIMIT|route 'GET \/x': rateLimit\.max must be a positive integer, got number 0/,
  );
  t.assert.throws(
    () => app.group('/g', { rateLimit: { max: 1, windowMs: 0 } }),
    /group '\/g': rateLimit\.windowMs must be a positive integer/,
  );
  t.assert.throws(
    () => new App({ rateLimit: { max: 1, windowMs: 1_000, key: 'ip' as never } }, { handleSignals: false, logStream: sink() }),
    /the App: rateLimit\.key must be a function of ctx/,
  );
  t.assert.throws(() => new App({ rateLimit: { max: 0, windowMs: 1_000 } }, { handleSignals: false, logStream: sink() }), /rateLimit\.max/);
});

test('a count that comes later (a store elsewhere) admits and refuses the same, the route waiting for it', async (t: TestContext) => {
  let calls = 0;
  const counts = new Map<string, number>();
  const later: CounterStore = {
    hit: async (key) => {
      calls++;
      await new Promise((resolve) => setImmediate(resolve));
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      return { count, resetMs: 30_500 };
    },
    release: () => {},
    close: async () => {},
  };
  const { app } = testApp({}, { counterStore: later });
  app.registerController(controller(route('/x', { rateLimit: { max: 2, windowMs: 60_000 } })));
  const replies = await hits(app, '/x', 3);
  t.assert.deepStrictEqual(statuses(replies), [200, 200, 429]);
  t.assert.equal(replies[1]?.headers['ratelimit'], '"GET /x";r=0;t=31');
  t.assert.equal(replies[2]?.headers['retry-after'], '31');
  t.assert.equal(calls, 3);
});

test('a handler timeout while the count is awaited answers 503 HANDLER_TIMEOUT; the late count changes nothing', async (t: TestContext) => {
  const answer = Promise.withResolvers<WindowCount>();
  const slow: CounterStore = { hit: () => answer.promise, release: () => {}, close: async () => {} };
  let ran = false;
  const { app } = testApp({}, { counterStore: slow });
  app.registerController(
    controller(
      route('/x', {
        timeoutMs: 30,
        rateLimit: { max: 5, windowMs: 60_000 },
        handler: () => {
          ran = true;
          return 1;
        },
      }),
    ),
  );
  const reply = await app.inject('/x');
  t.assert.equal(reply.statusCode, 503);
  t.assert.equal(reply.json().code, 'HANDLER_TIMEOUT');
  answer.resolve({ count: 1, resetMs: 1_000 });
  await new Promise((resolve) => setImmediate(resolve));
  t.assert.equal(ran, false, 'the handler never ran');
  t.assert.equal(reply.headers['ratelimit'], undefined);
});
