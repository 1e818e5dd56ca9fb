import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { App } from '../../../src/app/app.ts';
import { defineService } from '../../../src/app/define-service.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { serve } from '../../helpers/app.ts';
import { type LogSink, sink } from '../../helpers/sink.ts';

/** A team's logger: its own binding, redaction, a serializer, a mixin and level `debug`, writing into `logs`. */
function teamLogger(logs: LogSink, level = 'debug') {
  return pino(
    {
      level,
      base: { team: 'books' },
      redact: { paths: ['secret', 'req.headers["x-api-key"]'], censor: '***' },
      serializers: { route: (route: string) => `route:${route}` },
      mixin: () => ({ region: 'eu-1' }),
    },
    logs,
  );
}

const parsed = (logs: LogSink) => logs.lines;

function appWith(t: TestContext, logger: pino.Logger, options: { logBindings?: Record<string, unknown> } = {}) {
  const app = new App({ port: 0, host: '127.0.0.1', logging: { level: 'error' } }, { logger, handleSignals: false, ...options });
  app.registerController({
    routes: () => [
      {
        method: 'GET',
        path: '/books/:id',
        handler: (ctx) => {
          ctx.logger.info({ secret: 'hunter2', req: { headers: { 'x-api-key': 'k-123' } } }, 'looking the book up');
          if (ctx.params['id'] === 'boom') throw new Error('the shelf fell');
          if (ctx.params['id'] === 'gone') throw KError.notFound('no such book');
          return ctx.ok({ id: ctx.params['id'] });
        },
      },
    ],
  });
  t.after(() => app.close());
  return app;
}

test('the request line and ctx.logger go through the service’s logger: its bindings, mixin, serializer and redaction', async (t) => {
  const logs = sink();
  const app = appWith(t, teamLogger(logs), { logBindings: { worker: 1 } });
  const reply = await app.inject('/books/7');
  assert.equal(reply.statusCode, 200);
  const lines = parsed(logs);
  const own = lines.find((line) => line['msg'] === 'looking the book up');
  const request = lines.find((line) => line['msg'] === 'request completed');
  assert.ok(own && request, JSON.stringify(logs.lines));
  for (const line of [own, request]) {
    assert.equal(line['team'], 'books', 'the logger’s own binding');
    assert.equal(line['region'], 'eu-1', 'its mixin');
    assert.equal(line['worker'], 1, 'flotilla’s binding, added as a child');
    assert.equal(line['requestId'], reply.headers['x-request-id']);
    assert.equal(line['level'], 30, 'pino’s default level format: the logger’s, not flotilla’s');
  }
  assert.equal(own['secret'], '***', 'its redaction');
  assert.deepEqual(own['req'], { headers: { 'x-api-key': '***' } });
  assert.equal(request['route'], 'route:/books/:id', 'its serializer, on the request line too');
  assert.equal(request['status'], 200);
  assert.equal(request['method'], 'GET');
});

test('flotilla’s own lines (an error, listening, the shutdown) go through it too, at the logger’s level, not logging.level', async (t) => {
  const logs = sink();
  const app = appWith(t, teamLogger(logs, 'info'));
  assert.equal((await app.inject('/books/boom')).statusCode, 500);
  await serve(t, app);
  await app.close();
  const lines = parsed(logs);
  const failed = lines.find((line) => line['level'] === 50);
  assert.ok(failed, JSON.stringify(logs.lines));
  assert.equal((failed['err'] as { message?: string }).message, 'the shelf fell', 'pino’s err serializer');
  assert.equal(failed['region'], 'eu-1');
  // logging.level is `error`: the logger's `info` wins
  assert.ok(lines.some((line) => String(line['msg']).endsWith('listening') && line['team'] === 'books'));
  assert.ok(lines.some((line) => String(line['msg']).startsWith('shutdown:') && line['region'] === 'eu-1'));
});

test('the logger’s level decides: at warn, no request line and no info line; logging.requests: false turns the request lines off', async (t) => {
  const quiet = sink();
  const app = appWith(t, teamLogger(quiet, 'warn'));
  await app.inject('/books/7');
  assert.deepEqual(quiet.lines, []);

  const logs = sink();
  const unlogged = new App({ logging: { requests: false } }, { logger: teamLogger(logs), handleSignals: false });
  t.after(() => unlogged.close());
  unlogged.registerController({ routes: () => [{ method: 'GET', path: '/', handler: (ctx) => ctx.ok('hi') }] });
  await unlogged.inject('/');
  assert.deepEqual(
    parsed(logs).filter((line) => line['msg'] === 'request completed'),
    [],
  );
});

test('app.logger is the given logger when flotilla adds no binding of its own', (t) => {
  const logger = teamLogger(sink());
  const app = new App({}, { logger, handleSignals: false });
  t.after(() => app.close());
  assert.equal(app.logger, logger);
});

test('something that is not a pino logger is refused: FLO_ERR_BAD_LOGGER', () => {
  for (const given of [console, {}, 'pino', () => pino()]) {
    assert.throws(
      () => new App({}, { logger: given as never, handleSignals: false }),
      (error: { code?: string }) => error.code === 'FLO_ERR_BAD_LOGGER',
    );
  }
});

test('defineService({ logger, setup }) keeps the factory on the setup; a logger that is not a function is refused', () => {
  const logger = () => pino({ enabled: false });
  const setup = () => {};
  assert.equal(defineService({ logger, setup }).logger, logger);
  assert.equal(defineService({ settings: { type: 'object' }, logger, setup }).logger, logger);
  assert.equal(defineService({ setup }).logger, undefined);
  assert.throws(
    () => defineService({ logger: pino({ enabled: false }) as never, setup }),
    (error: { code?: string }) => error.code === 'FLO_ERR_BAD_SERVICE_SETUP',
  );
});
