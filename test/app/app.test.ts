import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Span, type Tracer, trace } from '@opentelemetry/api';
import { App } from '../../src/app/app.ts';
import type { Registrar } from '../../src/app/core/registrar.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import type { KConfig } from '../../src/config/types.ts';
import type { Scheduler } from '../../src/scheduler/scheduler.ts';
import { controller, testApp } from '../helpers/app.ts';
import { sink } from '../helpers/sink.ts';

function configError(config: unknown): ConfigError {
  let caught: unknown;
  try {
    new App(config as KConfig, { logStream: sink() });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError, `expected a ConfigError for ${JSON.stringify(config)}`);
  return caught;
}

describe('new App(config)', () => {
  test('applies the documented defaults', () => {
    const app = new App(undefined, { logStream: sink() });
    assert.equal(app.config.port, 3000);
    assert.equal(app.config.host, '0.0.0.0');
    assert.equal(app.config.env, 'development');
    assert.equal(app.config.serviceName, 'flotilla');
    assert.equal(app.config.disableHealth, false);
    assert.equal(app.config.docs.path, '/docs');
    assert.equal(app.config.docs.version, '1.0.0');
    assert.equal(app.config.limits.bodyBytes, 1_048_576);
    assert.equal(app.config.timeouts.keepAliveMs, 72_000);
    assert.equal(app.config.shutdown.timeoutMs, 10_000);
    assert.equal(app.role, 'standalone');
  });

  test('keeps given values, merges nested ones with the defaults, and freezes the result', () => {
    const app = new App({ serviceName: 'books', port: 8080, env: 'staging', docs: { title: 'Books' } }, { logStream: sink() });
    assert.equal(app.config.port, 8080);
    assert.equal(app.config.env, 'staging');
    assert.equal(app.config.docs.title, 'Books');
    assert.equal(app.config.docs.path, '/docs');
    assert.ok(Object.isFrozen(app.config));
    assert.ok(Object.isFrozen(app.config.docs));
  });

  test('rejects a bad port with a message naming the key', () => {
    for (const port of [-1, 65536, 1.5, '3000']) {
      const error = configError({ port });
      assert.equal(error.problems[0]?.key, 'port');
      assert.match(error.message, /port: must be/);
    }
  });

  test('rejects an unknown env and lists the allowed values', () => {
    const error = configError({ env: 'prod' });
    assert.deepEqual(
      error.problems.map((p) => p.key),
      ['env'],
    );
    assert.match(error.message, /env: must be one of "development", "staging", "production"/);
  });

  test('rejects a docs.servers entry that is not "<url> - <description>"', () => {
    const error = configError({ docs: { servers: ['https://api.example.com - Production', 'ftp://files - Files'] } });
    assert.equal(error.problems.length, 1);
    assert.equal(error.problems[0]?.key, 'docs.servers[1]');
    assert.match(error.message, /'ftp:\/\/files' is not an absolute http\(s\) URL/);
  });

  test('rejects unknown keys, at any depth, naming them', () => {
    assert.match(configError({ colour: 'red' }).message, /colour: unknown key/);
    assert.match(configError({ docs: { paht: '/x' } }).message, /docs\.paht: unknown key/);
  });

  test("rejects cors origins '*' together with credentials", () => {
    const error = configError({ cors: { origins: ['*'], credentials: true } });
    assert.equal(error.problems[0]?.key, 'cors.origins');
    assert.match(error.message, /'\*' cannot be combined with credentials/);
  });

  test('reports every problem at once', () => {
    const error = configError({ port: -1, env: 'prod', extra: true });
    assert.deepEqual(error.problems.map((p) => p.key).sort(), ['env', 'extra', 'port']);
  });

  test('rejects a headers timeout longer than the request timeout, which node:http would refuse at listen', () => {
    const error = configError({ timeouts: { requestMs: 5_000 } });
    assert.equal(error.problems[0]?.key, 'timeouts.headersMs');
    assert.match(error.message, /timeouts\.headersMs: must not exceed timeouts\.requestMs \(5000\)/);
    new App({ timeouts: { requestMs: 5_000, headersMs: 5_000 } }, { logStream: sink() });
  });
  test('rejects a shedAfterMs above delayTargetMs; left out, it follows a lower delayTargetMs', () => {
    const error = configError({ overload: { delayTargetMs: 30, shedAfterMs: 40 } });
    assert.equal(error.problems[0]?.key, 'overload.shedAfterMs');
    assert.match(error.message, /overload\.shedAfterMs: must not exceed overload\.delayTargetMs \(30\)/);
    new App({ overload: { delayTargetMs: 10 } }, { logStream: sink() });
  });
  test('rejects a drain delay that would spend the whole shutdown budget', () => {
    const error = configError({ shutdown: { timeoutMs: 1_000, drainDelayMs: 1_000 } });
    assert.equal(error.problems[0]?.key, 'shutdown.drainDelayMs');
    assert.match(error.message, /shutdown\.drainDelayMs: must be less than shutdown\.timeoutMs \(1000\)/);
    assert.match(configError({ shutdown: { drainDelayMs: 10_000 } }).message, /shutdown\.timeoutMs \(10000\)/);
    new App({ shutdown: { timeoutMs: 1_000, drainDelayMs: 999 } }, { logStream: sink() });
  });
});

describe('built-in routes', () => {
  test('GET /health, GET /docs and GET /docs/openapi.json exist as soon as the constructor returns', async () => {
    const { app } = testApp();
    assert.equal((await app.inject('/health')).statusCode, 200);
    const docs = await app.inject('/docs');
    assert.equal(docs.statusCode, 200);
    assert.match(String(docs.headers['content-type']), /text\/html/);
    const openapi = await app.inject('/docs/openapi.json');
    assert.equal(openapi.statusCode, 200);
    assert.equal(openapi.json().info.version, '1.0.0');
  });

  test('docs.path moves the documentation routes', async () => {
    const { app } = testApp({ docs: { path: '/api-docs', version: '2.1.0' } });
    assert.equal((await app.inject('/api-docs')).statusCode, 200);
    assert.equal((await app.inject('/api-docs/openapi.json')).json().info.version, '2.1.0');
    assert.equal((await app.inject('/docs')).statusCode, 404);
  });

  test('production has no documentation routes', async () => {
    const { app } = testApp({ env: 'production' });
    assert.equal((await app.inject('/docs')).statusCode, 404);
    assert.equal((await app.inject('/docs/openapi.json')).statusCode, 404);
    assert.equal((await app.inject('/health')).statusCode, 200);
  });

  test('disableHealth leaves GET /health out', async () => {
    const { app } = testApp({ disableHealth: true });
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'ROUTE_NOT_FOUND');
  });
});

describe('integration points', () => {
  test('logger is the pino logger writing to the configured stream', async () => {
    const { app, logs } = testApp({ serviceName: 'books' });
    app.logger.info({ answer: 42 }, 'hello');
    const line = await logs.waitFor((l) => l['msg'] === 'hello');
    assert.equal(line['answer'], 42);
    assert.equal(line['service'], 'books');
    assert.equal(line['level'], 'info');
  });

  test('engine is the find-my-way router with the registered routes', () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/books/:id', handler: () => ({}) }));
    const found = app.engine.find('GET', '/books/7');
    assert.ok(found);
    assert.deepEqual({ ...found.params }, { id: '7' });
    assert.equal(app.engine.find('GET', '/nope'), null);
    const routes = app.routes.map((r) => `${r.method} ${r.path}`);
    assert.equal(routes[0], 'GET /health');
    assert.ok(routes.includes('GET /docs/openapi.json'));
    assert.equal(routes.at(-1), 'GET /books/:id');
  });

  test('tracer is never undefined, and setTracer replaces it', () => {
    const { app } = testApp();
    assert.ok(app.tracer);
    assert.equal(typeof app.tracer.startSpan, 'function');
    const mine: Tracer = {
      startSpan: (name) => trace.getTracer('x').startSpan(name),
      startActiveSpan: ((name: string, fn: (span: Span) => unknown) =>
        fn(trace.getTracer('x').startSpan(name))) as Tracer['startActiveSpan'],
    };
    app.setTracer(mine);
    assert.equal(app.tracer, mine);
  });

  test('registerHealthChecker rejects a checker without a name or check, and duplicate names', () => {
    const { app } = testApp();
    const check = async () => {};
    assert.throws(() => app.registerHealthChecker({ name: '', check }), TypeError);
    assert.throws(() => app.registerHealthChecker({ name: 'db' } as never), TypeError);
    app.registerHealthChecker({ name: 'db', check });
    assert.throws(() => app.registerHealthChecker({ name: 'db', check }), /already registered/);
  });

  test('onShutdown accepts only functions', () => {
    const { app } = testApp();
    assert.throws(() => app.onShutdown('nope' as never), TypeError);
  });

  test('use(module) hands the module the App', () => {
    const { app } = testApp();
    let seen: Registrar | undefined;
    app.use({
      register(a) {
        seen = a;
        a.registerController(controller({ method: 'GET', path: '/m', handler: () => 'module' }));
      },
    });
    assert.equal(seen, app);
    assert.ok(app.engine.find('GET', '/m'));
  });

  test('inject runs a request through the whole pipeline and answers in light-my-request shape', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'POST', path: '/echo', handler: (ctx) => ctx.created({ got: ctx.body }) }));
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: { a: 1 } });
    assert.equal(res.statusCode, 201);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(res.headers['x-request-id']);
    assert.equal(res.body, '{"got":{"a":1}}');
    assert.deepEqual(res.json(), { got: { a: 1 } });
  });
});

describe('registerScheduler', () => {
  function recordingScheduler(events: string[]): Scheduler {
    return {
      start: () => {
        events.push('start');
      },
      stop: (signal) => {
        events.push(`stop:${signal instanceof AbortSignal}`);
      },
    };
  }

  test('standalone: starts with listen() and stops in the shutdown sequence with the shared signal', async () => {
    const { app } = testApp();
    const events: string[] = [];
    app.registerScheduler(recordingScheduler(events));
    app.onShutdown(() => {
      events.push('later hook');
    });
    assert.deepEqual(events, []);
    const listening = app.listen();
    await app.ready();
    assert.deepEqual(events, ['start']);
    await app.close();
    await listening;
    assert.deepEqual(events, ['start', 'stop:true', 'later hook']);
  });

  test('with runSchedulers: false (a cluster worker) it records nothing to run', async () => {
    const { app } = testApp({}, { role: 'worker', runSchedulers: false });
    const events: string[] = [];
    app.registerScheduler(recordingScheduler(events));
    const listening = app.listen();
    await app.ready();
    await app.close();
    await listening;
    assert.deepEqual(events, []);
  });
});

describe('Symbol.asyncDispose', () => {
  test('await using closes the App, running its hooks', async () => {
    const ran: string[] = [];
    {
      await using disposable = testApp().app;
      disposable.onShutdown(() => {
        ran.push('hook');
      });
      const listening = disposable.listen();
      await disposable.ready();
      listening.catch(() => {});
    }
    assert.deepEqual(ran, ['hook']);
  });
});
