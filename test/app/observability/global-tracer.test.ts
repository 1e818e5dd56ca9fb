import { type TestContext, test } from 'node:test';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { GlobalTracer } from '../../../src/app/observability/global-tracer.ts';
import { ServicePart } from '../../../src/app/service-part.ts';
import { resolveConfig } from '../../../src/config/validate.ts';
import { testApp } from '../../helpers/app.ts';

function sdk(): { provider: TracerProvider; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { provider: new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }), exporter };
}

// This file registers global providers itself, in its own process (node --test runs each file apart).
test('an SDK registered after the App was built records its SERVER spans; a provider registered again is followed', async (t: TestContext) => {
  const { app } = testApp({ serviceName: 'late' });
  t.after(() => app.close());
  const before = await app.inject('/health');
  t.assert.strictEqual(before.headers['traceresponse'], undefined, 'no SDK yet: nothing recorded');

  const first = sdk();
  trace.setGlobalTracerProvider(first.provider);
  await app.inject('/health');
  const span = first.exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
  t.assert.strictEqual(span?.name, 'GET /health');
  t.assert.strictEqual(span?.instrumentationScope.name, 'late');

  trace.disable();
  const second = sdk();
  trace.setGlobalTracerProvider(second.provider);
  await app.inject('/health');
  t.assert.strictEqual(second.exporter.getFinishedSpans().length, 1, 'the replacement provider gets the next span');
  t.assert.strictEqual(first.exporter.getFinishedSpans().length, 1, 'the first one no more');
  trace.disable();
});

test('GlobalTracer: startActiveSpan and startSpan go to the provider of the moment; the primary part uses one too', (t: TestContext) => {
  const tracer = new GlobalTracer('jobs');
  t.assert.strictEqual(
    tracer.startActiveSpan('before', (span) => span.isRecording()),
    false,
  );
  const { provider, exporter } = sdk();
  trace.setGlobalTracerProvider(provider);
  t.after(() => trace.disable());
  tracer.startActiveSpan('active', (span) => span.end());
  tracer.startSpan('plain').end();
  t.assert.deepStrictEqual(
    exporter.getFinishedSpans().map((s) => s.name),
    ['active', 'plain'],
  );
  t.assert.ok(new ServicePart(resolveConfig({ logging: { level: 'silent' } })).tracer instanceof GlobalTracer);
});
