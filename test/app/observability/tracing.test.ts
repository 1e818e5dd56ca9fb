import assert from 'node:assert/strict';
import { after, beforeEach, describe, test } from 'node:test';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';
import { httpRequest } from '../../helpers/http.ts';

// A real OpenTelemetry SDK, as a user would register it: the App itself depends on the API only.
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
trace.setGlobalTracerProvider(provider);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
after(() => provider.shutdown());
beforeEach(() => exporter.reset());

const PARENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = 'b7ad6b7169203331';

function books() {
  const { app, logs } = testApp({ serviceName: 'books' });
  app.registerController(
    controller(
      {
        method: 'GET',
        path: '/books/:id',
        handler: async (ctx) => {
          ctx.logger.info({ step: 'handler' }, 'looking up');
          // An instrumented library inside the handler sees the request's span as the active one.
          const child = trace.getTracer('db').startSpan('SELECT books');
          child.end();
          if (ctx.params['id'] === '0') throw KError.notFound('book 0 does not exist');
          return { id: ctx.params['id'] };
        },
      },
      {
        method: 'GET',
        path: '/boom',
        handler: () => {
          throw new Error('kaboom');
        },
      },
    ),
  );
  return { app, logs };
}

describe('server spans with a real OpenTelemetry SDK', () => {
  test('one SERVER span per request, named after the route template, with the HTTP semantic-convention attributes', async () => {
    const { app } = books();
    void app.listen();
    const { port } = await app.ready();
    try {
      const res = await httpRequest(port, '/books/42', { headers: { 'user-agent': 'flotilla-test/1.0' } });
      assert.equal(res.status, 200);
      const server = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
      assert.ok(server);
      assert.equal(server.name, 'GET /books/:id');
      assert.deepEqual(
        { ...server.attributes },
        {
          'http.request.method': 'GET',
          'url.path': '/books/42',
          'url.scheme': 'http',
          'server.address': '127.0.0.1',
          'server.port': port,
          'client.address': '127.0.0.1',
          'user_agent.original': 'flotilla-test/1.0',
          'http.route': '/books/:id',
          'http.response.status_code': 200,
        },
      );
      assert.equal(server.status.code, SpanStatusCode.UNSET);
      assert.equal(server.instrumentationScope.name, 'books', 'the default tracer is named after the service');
    } finally {
      await app.close();
    }
  });

  test('an incoming traceparent makes the span its child; spans started in the handler are the span’s children', async () => {
    const { app } = books();
    const res = await app.inject({
      url: '/books/7',
      headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, tracestate: 'vendor=x' },
    });
    assert.equal(res.statusCode, 200);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    const child = spans.find((s) => s.name === 'SELECT books')!;
    assert.equal(server.spanContext().traceId, PARENT_TRACE);
    assert.equal(server.parentSpanContext?.spanId, PARENT_SPAN);
    assert.equal(server.spanContext().traceState?.get('vendor'), 'x');
    assert.equal(child.parentSpanContext?.spanId, server.spanContext().spanId);
    assert.equal(res.headers['traceresponse'], `00-${PARENT_TRACE}-${server.spanContext().spanId}-01`);
  });

  test('5xx: status ERROR with the exception recorded; 4xx: status left unset', async () => {
    const { app } = books();
    await app.inject('/boom');
    await app.inject('/books/0');
    await app.inject('/nowhere');
    const [boom, notFound, unmatched] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    assert.equal(boom?.status.code, SpanStatusCode.ERROR);
    assert.equal(boom?.attributes['http.response.status_code'], 500);
    assert.equal(boom?.events[0]?.name, 'exception');
    assert.equal(boom?.events[0]?.attributes?.['exception.message'], 'kaboom');
    assert.equal(notFound?.status.code, SpanStatusCode.UNSET);
    assert.equal(notFound?.attributes['http.response.status_code'], 404);
    assert.equal(notFound?.events.length, 0);
    assert.equal(unmatched?.name, 'GET', 'no route: the span is named after the method only');
    assert.equal(unmatched?.attributes['http.route'], undefined);
  });

  test('setTracer swaps the tracer; app.tracer is never undefined', async () => {
    const { app } = books();
    assert.ok(app.tracer);
    app.setTracer(provider.getTracer('custom'));
    await app.inject('/books/1');
    const server = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
    assert.equal(server?.instrumentationScope.name, 'custom');
  });
});

describe('one correlation id across logs, errors and headers', () => {
  test('request id and trace id are on the request line, handler lines and error lines, in the problem body and the headers', async () => {
    const { app, logs } = books();
    const ok = await app.inject({ url: '/books/3', headers: { 'x-request-id': 'req-ok' } });
    const okTrace = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.SERVER)!
      .spanContext().traceId;
    const handlerLine = await logs.waitFor((l) => l['msg'] === 'looking up');
    assert.equal(handlerLine['requestId'], 'req-ok');
    assert.equal(handlerLine['traceId'], okTrace);
    const requestLine = await logs.waitFor((l) => l['msg'] === 'request completed' && l['requestId'] === 'req-ok');
    assert.equal(requestLine['traceId'], okTrace);
    assert.equal(ok.headers['x-request-id'], 'req-ok');
    assert.match(String(ok.headers['traceresponse']), new RegExp(`^00-${okTrace}-[0-9a-f]{16}-01$`));

    exporter.reset();
    const failed = await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-boom' } });
    const boomTrace = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.SERVER)!
      .spanContext().traceId;
    assert.equal(failed.json().requestId, 'req-boom');
    assert.equal(failed.json().traceId, boomTrace);
    const errorLine = await logs.waitFor((l) => l['msg'] === 'request failed');
    assert.equal(errorLine['requestId'], 'req-boom');
    assert.equal(errorLine['traceId'], boomTrace);
  });
});
