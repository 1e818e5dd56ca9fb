import { type TestContext, test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { BatchSpanProcessor, InMemorySpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { traceFlush } from '../../../src/app/observability/flush-traces.ts';
import { testApp } from '../../helpers/app.ts';

test('no SDK registered: nothing to flush', (t: TestContext) => {
  t.assert.strictEqual(traceFlush(), undefined);
});

test("the App's shutdown flushes the SDK's batch after the hooks: the last request's span is exported", async (t: TestContext) => {
  const exporter = new InMemorySpanExporter();
  // a batch that would wait ten minutes: only a flush exports it within the test
  const processor = new BatchSpanProcessor({ exporter, scheduledDelayMillis: 600_000 });
  trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [processor] }));
  t.after(() => trace.disable());
  t.assert.strictEqual(typeof traceFlush(), 'function');

  const { app, logs } = testApp({ serviceName: 'flushed' });
  const order: string[] = [];
  app.onShutdown(() => {
    order.push(`hook: ${exporter.getFinishedSpans().length} exported`);
  });
  await app.inject('/health');
  t.assert.strictEqual(exporter.getFinishedSpans().length, 0, 'still batched');
  await app.close();
  t.assert.deepStrictEqual(order, ['hook: 0 exported']);
  t.assert.deepStrictEqual(
    exporter.getFinishedSpans().map((s) => s.name),
    ['GET /health'],
  );
  t.assert.ok(
    logs.lines.some((l) => l['phase'] === 'flush-traces'),
    'the phase is logged',
  );
});

test('a flush that fails is logged and does not fail the shutdown', async (t: TestContext) => {
  const failing = { getTracer: () => trace.getTracer('x'), forceFlush: () => Promise.reject(new Error('collector down')) };
  trace.setGlobalTracerProvider(failing);
  t.after(() => trace.disable());
  const { app, logs } = testApp({ serviceName: 'failing' });
  await app.close();
  t.assert.strictEqual(app.cleanShutdown, true);
  t.assert.ok(logs.lines.some((l) => l.msg === 'shutdown: flushing the traces failed'));
});
