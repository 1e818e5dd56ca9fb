import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Gauge, Registry } from 'prom-client';
import { jwtAuth } from '../../src/app/auth/jwt-auth.ts';
import { fromConnect } from '../../src/app/connect/from-connect.ts';
import type { Ctx } from '../../src/app/core/ctx.ts';
import type { Route } from '../../src/app/core/route.ts';
import { defineService } from '../../src/app/define-service.ts';
import { prettyStream } from '../../src/app/observability/pretty-stream.ts';
import { parseCli } from '../../src/cli/args.ts';
import { importClient } from '../../src/coordination/import-client.ts';
import { createError, FLOTILLA_ERRORS, FlotillaError, type FlotillaErrorCode } from '../../src/errors/flotilla-error.ts';
import { KError } from '../../src/errors/k-error.ts';
import * as flotilla from '../../src/index.ts';
import { PromMetricsCollector } from '../../src/metrics/prom-collector.ts';
import { migrate } from '../../src/migrations/migrate.ts';
import { loadService } from '../../src/process/load-service.ts';
import { decodeWorkerStart } from '../../src/process/worker-env.ts';
import { type CronJob, CronScheduler } from '../../src/scheduler/cron-scheduler.ts';
import { controller, testApp } from '../helpers/app.ts';

const scratch = mkdtempSync(join(tmpdir(), 'flotilla-error-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A new directory holding the given files, under the scratch directory. */
function directory(name: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

function quietApp() {
  return testApp({ logging: { level: 'silent' } }).app;
}

function register(...routes: unknown[]): void {
  quietApp().registerController(controller(...(routes as Route[])));
}

const run = () => {};
const handler = () => 1;

/** The error a request-time misuse throws inside a handler, captured there. */
async function thrownInHandler(misuse: (ctx: Ctx) => unknown | Promise<unknown>): Promise<unknown> {
  const app = quietApp();
  let caught: unknown;
  app.registerController(
    controller({
      method: 'GET',
      path: '/misuse',
      handler: async (ctx) => {
        try {
          await misuse(ctx);
        } catch (error) {
          caught = error;
        }
        return 'ok';
      },
    }),
  );
  await app.inject('/misuse');
  return caught;
}

/** The error saving a request's session throws after its handler, as the App's error handler sees it. */
async function thrownSavingSession(value: unknown): Promise<unknown> {
  const { app } = testApp({ logging: { level: 'silent' }, cookies: { secrets: ['s'.repeat(32)] }, sessions: { maxBytes: 64 } });
  let caught: unknown;
  app.setErrorHandler((error) => {
    caught = error;
  });
  app.registerController(
    controller({
      method: 'GET',
      path: '/session',
      handler: async (ctx) => {
        (await ctx.session()).set('value', value);
        return 'ok';
      },
    }),
  );
  await app.inject('/session');
  return caught;
}

/**
 * Each code with the real API call that misuses the framework into throwing
 * it (a Record over every code: a new code fails typechecking until it has one).
 */
const MISUSES: Record<FlotillaErrorCode, () => unknown> = {
  FLO_ERR_BAD_ROUTE: () => quietApp().registerController({ routes: () => [null as never] }),
  FLO_ERR_BAD_METHOD: () => register({ method: 'FETCH', path: '/x', handler }),
  FLO_ERR_BAD_PATH: () => register({ method: 'GET', path: 'x', handler }),
  FLO_ERR_BAD_BODY_OPTION: () => register({ method: 'POST', path: '/x', body: 'xml' as never, handler }),
  FLO_ERR_BAD_ROUTE_OPTION: () => register({ method: 'GET', path: '/x', timeoutMs: -1, handler }),
  FLO_ERR_BAD_HANDLER: () => register({ method: 'GET', path: '/x', handler: 'nope' }),
  FLO_ERR_BAD_MIDDLEWARE: () => register({ method: 'GET', path: '/x', handler, middlewares: ['nope'] }),
  FLO_ERR_BAD_PATTERN: () => register({ method: 'GET', path: '/:a-:b', handler }),
  FLO_ERR_ROUTE_CONFLICT: () => register({ method: 'GET', path: '/dup', handler }, { method: 'GET', path: '/dup', handler }),
  FLO_ERR_BAD_SCHEMA: () => register({ method: 'GET', path: '/x', schema: { querystring: { type: 'nonsense' } }, handler }),
  FLO_ERR_BAD_RATE_LIMIT: () => register({ method: 'GET', path: '/x', rateLimit: { max: 0, windowMs: 1000 }, handler }),
  FLO_ERR_BAD_PREFIX: () => quietApp().group('api'),
  FLO_ERR_BAD_GROUP_OPTION: () => quietApp().group('/api', { securty: [] } as never),
  FLO_ERR_BAD_SECURITY: () => register({ method: 'POST', path: '/x', security: [{ apiKey: [] }], handler }),
  FLO_ERR_BAD_CONNECT_MIDDLEWARE: () => fromConnect('helmet' as never),
  FLO_ERR_BAD_STATIC_OPTION: () => quietApp().serveStatic('/assets', scratch, { maxAge: 60 } as never),
  FLO_ERR_STATIC_DIRECTORY: () => quietApp().serveStatic('/assets', join(scratch, 'no-such-directory')),
  FLO_ERR_BAD_STATUS: () => new KError(200, 'OK', 'not an error'),
  FLO_ERR_BAD_JWT_OPTION: () => jwtAuth({ secret: 'x' }),
  FLO_ERR_NOT_A_WEBSOCKET: () => thrownInHandler((ctx) => ctx.subscribe('books')).then((e) => Promise.reject(e)),
  FLO_ERR_BAD_TOPIC: () => quietApp().publish('', 'x'),
  FLO_ERR_PUBLISH_TOO_LARGE: () => testApp({ logging: { level: 'silent' }, websockets: { maxMessageBytes: 4 } }).app.publish('t', 'hello'),
  FLO_ERR_NEXT_TWICE: async () => {
    const app = quietApp();
    let caught: unknown;
    const twice = async (_ctx: Ctx, next: () => Promise<void>) => {
      await next();
      try {
        await next();
      } catch (error) {
        caught = error;
      }
    };
    app.registerController(controller({ method: 'GET', path: '/twice', handler, middlewares: [twice] }));
    await app.inject('/twice');
    throw caught;
  },
  FLO_ERR_NO_COOKIE_SECRETS: async () => {
    throw await thrownInHandler((ctx) => ctx.cookies.set('session', 'u1', { signed: true }));
  },
  FLO_ERR_SESSIONS_NEED_SECRETS: async () => {
    throw await thrownInHandler((ctx) => ctx.session());
  },
  FLO_ERR_SESSION_TOO_LARGE: async () => {
    throw await thrownSavingSession('x'.repeat(100));
  },
  FLO_ERR_SESSION_VALUE: async () => {
    throw await thrownSavingSession(10n);
  },
  FLO_ERR_BAD_SESSION_STORE: () => quietApp().setSessionStore({ get: () => {}, set: () => {} } as never),
  FLO_ERR_SESSION_STORE_FIXED: () => {
    const app = quietApp();
    const store = { get: (_sid: string, done: () => void) => done(), set: () => {}, destroy: () => {} };
    app.setSessionStore(store);
    app.setSessionStore(store);
  },
  FLO_ERR_BAD_COOKIE: async () => {
    throw await thrownInHandler((ctx) => ctx.cookies.set('a b', 'x'));
  },
  FLO_ERR_BAD_HOOK: () => quietApp().onShutdown('nope' as never),
  FLO_ERR_BAD_HEALTH_CHECKER: () => quietApp().registerHealthChecker({ name: '', check: async () => {} }),
  FLO_ERR_DUPLICATE_HEALTH_CHECKER: () => {
    const app = quietApp();
    app.registerHealthChecker({ name: 'db', check: async () => {} });
    app.registerHealthChecker({ name: 'db', check: async () => {} });
  },
  FLO_ERR_I18N_DIRECTORY: () => testApp({ i18n: { directory: join(scratch, 'no-such-directory'), defaultLocale: 'en' } }),
  FLO_ERR_BAD_LOCALE: () => testApp({ i18n: { directory: directory('bad-locale', { 'english.json': '{}' }), defaultLocale: 'en' } }),
  FLO_ERR_BAD_CATALOG: () => testApp({ i18n: { directory: directory('bad-catalog', { 'en.json': '{"a": ' }), defaultLocale: 'en' } }),
  FLO_ERR_NO_FALLBACK_CATALOG: () => testApp({ i18n: { directory: directory('no-fallback', { 'fr.json': '{}' }), defaultLocale: 'en' } }),
  FLO_ERR_BAD_CRON_JOB: () => new CronScheduler([{ name: 'x', cron: '* * * * *' } as CronJob]),
  FLO_ERR_DUPLICATE_CRON_JOB: () =>
    new CronScheduler([
      { name: 'a', cron: '* * * * *', run },
      { name: 'a', cron: '* * * * *', run },
    ]),
  FLO_ERR_BAD_CRON_EXPRESSION: () => new CronScheduler([{ name: 'report', cron: '61 * * * *', run }]),
  FLO_ERR_BAD_TIME_ZONE: () => new CronScheduler([], { timezone: 'Mars/Olympus' }),
  FLO_ERR_UNKNOWN_JOB: () => {
    const app = quietApp();
    app.registerScheduler(new CronScheduler([{ name: 'report', cron: '0 0 6 * * *', run }]));
    return app.runScheduled('reprot');
  },
  FLO_ERR_JOB_NOT_RUNNABLE: () => testApp({ logging: { level: 'silent' } }, { runSchedulers: false }).app.runScheduled('report'),
  FLO_ERR_BAD_MIGRATE_OPTION: () => migrate({ dir: scratch, database: 'postgres://db/app' as never }),
  FLO_ERR_MIGRATIONS_DIRECTORY: () =>
    migrate({ dir: directory('migrations', { 'books.sql': '' }), database: { query: async () => ({ rows: [] }) } }),
  FLO_ERR_METRIC_CONFLICT: () => {
    const registry = new Registry();
    new Gauge({ name: 'http_requests_total', help: 'not a counter', registers: [registry] });
    return new PromMetricsCollector(registry);
  },
  FLO_ERR_BAD_SERVICE_SETUP: () => defineService('nope' as never),
  FLO_ERR_BAD_LOGGER: () => new flotilla.App({}, { logger: console as never }),
  FLO_ERR_BAD_SERVICE_MODULE: () => {
    const path = join(scratch, 'no-setup.mjs');
    writeFileSync(path, 'export const answer = 42;\n');
    return loadService(path);
  },
  FLO_ERR_LISTEN_TWICE: async () => {
    const { app } = testApp({ logging: { level: 'silent' } });
    const listening = app.listen();
    await app.ready();
    try {
      await app.listen();
    } finally {
      await app.close();
      await listening;
    }
  },
  FLO_ERR_NOT_STARTED_BY_PRIMARY: () => decodeWorkerStart(undefined),
  FLO_ERR_CLI_USAGE: () => parseCli(['serve']),
  // looked up from a directory without node_modules, as in a project that did not install it
  FLO_ERR_PRETTY_MISSING: () => prettyStream(join(tmpdir(), 'no-such-project', 'x.js')),
  // as with an install that left the optional client packages out
  FLO_ERR_COORDINATION_CLIENT_MISSING: () => importClient('no-such-redis-client', 'redis://redis:6379'),
};

/** What a misuse throws (or rejects with). */
async function thrownBy(misuse: () => unknown): Promise<unknown> {
  try {
    await misuse();
  } catch (error) {
    return error;
  }
  assert.fail('the misuse did not throw');
}

describe('FlotillaError: every code is thrown by its misuse', () => {
  test('the misuse table covers every code', () => {
    assert.deepEqual(Object.keys(MISUSES).sort(), Object.keys(FLOTILLA_ERRORS).sort());
  });

  for (const [code, misuse] of Object.entries(MISUSES) as [FlotillaErrorCode, () => unknown][]) {
    test(code, async () => {
      const error = await thrownBy(misuse);
      const { base } = FLOTILLA_ERRORS[code];
      assert.ok(error instanceof FlotillaError, `${String(error)} is a FlotillaError`);
      assert.equal(error.code, code);
      assert.ok(error instanceof base, `${code} is an instance of ${base.name}`);
      assert.ok(error instanceof Error);
      assert.equal(error.name, base.name);
      assert.equal(String(error), `${base.name} [${code}]: ${error.message}`);
      assert.match(error.stack ?? '', new RegExp(`^${base.name} \\[${code}\\]: `));
      assert.doesNotMatch(error.message, /\{\w+\}/, 'every placeholder is filled');
    });
  }
});

describe('FlotillaError: messages and causes', () => {
  test('a route conflict names the route and keeps find-my-way’s error as its cause', async () => {
    const error = await thrownBy(MISUSES.FLO_ERR_ROUTE_CONFLICT);
    assert.ok(error instanceof FlotillaError);
    assert.match(error.message, /^cannot register GET \/dup: /);
    assert.ok(error.cause instanceof Error);
  });

  test('an unsafe regex is a bad pattern, not a conflict', async () => {
    const error = await thrownBy(() => register({ method: 'GET', path: '/r/:id(([a-z]+)+$)', handler }));
    assert.ok(error instanceof FlotillaError);
    assert.equal(error.code, 'FLO_ERR_BAD_PATTERN');
    assert.match(error.message, /cannot register GET \/r\/:id.*not safe/);
  });

  test('a group middleware that is not a function names the group', async () => {
    const error = await thrownBy(() => quietApp().group('/api', 'nope' as never));
    assert.ok(error instanceof FlotillaError && error instanceof TypeError);
    assert.equal(error.code, 'FLO_ERR_BAD_MIDDLEWARE');
    assert.equal(error.message, "group '/api': middlewares must be functions");
  });

  test('an unreadable i18n directory wraps the fs error as its cause', async () => {
    const error = await thrownBy(MISUSES.FLO_ERR_I18N_DIRECTORY);
    assert.ok(error instanceof FlotillaError);
    assert.equal((error.cause as NodeJS.ErrnoException).code, 'ENOENT');
    assert.match(error.message, /no-such-directory.*ENOENT/);
  });

  test('a catalog that does not parse names its file and keeps the parse error', async () => {
    const error = await thrownBy(MISUSES.FLO_ERR_BAD_CATALOG);
    assert.ok(error instanceof FlotillaError);
    assert.match(error.message, /en\.json: /);
    assert.ok(error.cause instanceof SyntaxError);
  });

  test('a schema error names the route and the part', async () => {
    const error = await thrownBy(MISUSES.FLO_ERR_BAD_SCHEMA);
    assert.ok(error instanceof FlotillaError);
    assert.match(error.message, /^route GET \/x: the querystring schema is invalid: /);
  });

  test('ctx.status() outside 100..599 is a coded TypeError', async () => {
    const error = await thrownInHandler((ctx) => ctx.status(42));
    assert.ok(error instanceof FlotillaError && error instanceof TypeError);
    assert.equal(error.code, 'FLO_ERR_BAD_STATUS');
    assert.equal(error.message, 'ctx.status() must be an integer in 100..599, got 42');
  });

  test('a malformed worker environment is coded too, with the parse error as cause', () => {
    assert.throws(
      () => decodeWorkerStart('{'),
      (error: unknown) => {
        assert.ok(error instanceof FlotillaError);
        assert.equal(error.code, 'FLO_ERR_NOT_STARTED_BY_PRIMARY');
        assert.ok(error.cause instanceof SyntaxError);
        return true;
      },
    );
  });
});

describe('FlotillaError: the class and the helper', () => {
  test('new FlotillaError builds an instance of the code’s base class', () => {
    const typed = new FlotillaError('FLO_ERR_BAD_PREFIX', { prefix: 'api' });
    assert.ok(typed instanceof TypeError && typed instanceof FlotillaError);
    assert.equal(typed.message, "group prefix must start with '/', got 'api'");
    const plain = new FlotillaError('FLO_ERR_DUPLICATE_HEALTH_CHECKER', { name: 'db' });
    assert.ok(plain instanceof FlotillaError && !(plain instanceof TypeError));
    assert.equal(Object.getPrototypeOf(plain), FlotillaError.prototype);
  });

  test('createError fills the template, keeps the cause and starts the stack at its caller', () => {
    const cause = new Error('EACCES');
    const error = createError('FLO_ERR_I18N_DIRECTORY', { path: '/srv/locales', reason: 'EACCES' }, { cause });
    assert.equal(error.message, "cannot read the message catalogs at '/srv/locales': EACCES");
    assert.equal(error.cause, cause);
    assert.doesNotMatch(error.stack?.split('\n')[1] ?? '', /createError|flotilla-error\.ts/);
    // @ts-expect-error: the template needs `reason`
    createError('FLO_ERR_I18N_DIRECTORY', { path: '/srv/locales' });
  });

  test('the code is enumerable and read-only; plain errors are not FlotillaErrors', () => {
    const error = createError('FLO_ERR_NEXT_TWICE');
    assert.deepEqual(Object.keys(error), ['code']);
    assert.throws(() => {
      (error as { code: string }).code = 'OTHER';
    }, TypeError);
    assert.equal(new TypeError('x') instanceof FlotillaError, false);
    assert.equal(Object.assign(new Error('x'), { code: 'FLO_ERR_NEXT_TWICE' }) instanceof FlotillaError, false);
    assert.equal((null as unknown) instanceof FlotillaError, false);
  });

  test('an unknown code is refused', () => {
    assert.throws(() => new FlotillaError('FLO_ERR_NOPE' as FlotillaErrorCode), /not a FlotillaError code/);
  });

  test('FlotillaError and the registry are exported from the package', () => {
    assert.equal(flotilla.FlotillaError, FlotillaError);
    assert.equal(flotilla.FLOTILLA_ERRORS, FLOTILLA_ERRORS);
  });
});
