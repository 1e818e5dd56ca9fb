import { type TestContext, test } from 'node:test';
import { Registry } from 'prom-client';
import { admissionGauge } from '../../src/metrics/admission-metrics.ts';
import { shedCounter } from '../../src/metrics/shed-metrics.ts';

test('shedCounter registers flotilla_requests_shed_total{reason} once, its reasons at 0', async (t: TestContext) => {
  const registry = new Registry();
  const workers = shedCounter(registry, ['overload', 'client-gone', 'handler-timeout']);
  const primary = shedCounter(registry, ['queue']);
  t.assert.strictEqual(primary, workers, 'the same counter: one family, whoever registers it');
  primary.inc({ reason: 'queue' });
  const text = await registry.metrics();
  t.assert.match(text, /^# TYPE flotilla_requests_shed_total counter$/m);
  for (const reason of ['overload', 'client-gone', 'handler-timeout']) {
    t.assert.match(text, new RegExp(`^flotilla_requests_shed_total\\{reason="${reason}"\\} 0$`, 'm'));
  }
  t.assert.match(text, /^flotilla_requests_shed_total\{reason="queue"\} 1$/m);
});

test('admissionGauge starts at 0 and says what its sum means', async (t: TestContext) => {
  const registry = new Registry();
  admissionGauge(registry).set(1);
  const text = await registry.metrics();
  t.assert.match(text, /^# HELP flotilla_admission_state .*number of workers shedding/m);
  t.assert.match(text, /^flotilla_admission_state 1$/m);
  t.assert.strictEqual(admissionGauge(registry), admissionGauge(registry), 'registered once');
});
