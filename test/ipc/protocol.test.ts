import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  describeInvalid,
  isFlotillaMessage,
  isPrimaryMessage,
  isWorkerMessage,
  MAX_ID_LENGTH,
  MAX_MESSAGE_LENGTH,
  type MetricFamily,
  msg,
  type PrimaryMessage,
  type WorkerMessage,
} from '../../src/ipc/protocol.ts';

const METRICS: MetricFamily[] = [
  {
    name: 'http_requests_total',
    help: 'Requests',
    type: 'counter',
    aggregator: 'sum',
    series: ['http_requests_total{route="/a"}'],
    values: [3],
  },
  {
    name: 'd_seconds',
    help: 'Durations',
    type: 'histogram',
    aggregator: 'sum',
    series: ['route="/a",method="GET"', ''],
    values: [1, 2, 0.5, 2, 'NaN', '+Inf', 0, 0],
    keys: ['method="GET",route="/a"', ''],
    buckets: ['0.1', '+Inf'],
  },
];

const WORKER: WorkerMessage[] = [
  msg.listening(123, { host: '0.0.0.0', port: 3000 }),
  msg.listening(1, { host: '::', port: 65535 }),
  msg.shutdownComplete(123, true),
  msg.shutdownComplete(123, false),
  msg.metricsResponse('m-1', METRICS),
  msg.metricsResponse('m-2', []),
  msg.fatal(123, 'boom'),
  msg.fatal(123, ''),
];
const PRIMARY: PrimaryMessage[] = [msg.shutdown(Date.now() + 10_000), msg.metricsRequest('m-1')];

/** What a message looks like after crossing the IPC channel (JSON serialization). */
const overIpc = (m: unknown): unknown => JSON.parse(JSON.stringify(m));

test('every valid message passes its own guard, also after crossing IPC, and not the other', () => {
  for (const m of WORKER) {
    assert.ok(isWorkerMessage(m), describeInvalid(m));
    assert.ok(isWorkerMessage(overIpc(m)));
    assert.equal(isPrimaryMessage(m), false);
    assert.ok(isFlotillaMessage(m));
    assert.equal(describeInvalid(m), `${m.type}: valid, but it goes from a worker to the primary`);
  }
  for (const m of PRIMARY) {
    assert.ok(isPrimaryMessage(m), describeInvalid(m));
    assert.equal(describeInvalid(m), `${m.type}: valid, but it goes from the primary to a worker`);
    assert.ok(isPrimaryMessage(overIpc(m)));
    assert.equal(isWorkerMessage(m), false);
  }
});

test('the message shapes are the documented ones', () => {
  assert.deepEqual(msg.listening(7, { host: 'h', port: 1 }), { v: 1, type: 'flotilla:listening', pid: 7, address: { host: 'h', port: 1 } });
  assert.deepEqual(msg.shutdown(5), { v: 1, type: 'flotilla:shutdown', deadline: 5 });
  assert.deepEqual(msg.metricsRequest('a'), { v: 1, type: 'flotilla:metrics-request', id: 'a' });
});

test('a fatal message is truncated so that it stays valid', () => {
  const m = msg.fatal(1, 'x'.repeat(MAX_MESSAGE_LENGTH * 3));
  assert.equal(m.message.length, MAX_MESSAGE_LENGTH);
  assert.ok(isWorkerMessage(m));
});

test('mutated messages fail without throwing, with a reason', () => {
  const listening = msg.listening(123, { host: 'h', port: 3000 });
  const cases: [unknown, RegExp][] = [
    [{ ...listening, v: 2 }, /^flotilla:listening: v must be 1$/],
    [{ ...listening, v: '1' }, /v must be 1/],
    [{ ...listening, pid: undefined }, /pid must be a positive integer/],
    [{ v: 1, type: 'flotilla:listening', address: listening.address }, /pid is missing/],
    [{ ...listening, pid: -1 }, /pid must be a positive integer/],
    [{ ...listening, pid: 1.5 }, /pid must be/],
    [{ ...listening, address: { host: 'h', port: 0 } }, /address\.port must be a port/],
    [{ ...listening, address: { host: '', port: 1 } }, /address\.host must be a string/],
    [{ ...listening, address: { host: 'h', port: 1, extra: 1 } }, /address\.unexpected field "extra"/],
    [{ ...listening, address: [] }, /address must be an object/],
    [{ ...listening, evil: () => 1 }, /unexpected field "evil"/],
    [{ ...msg.shutdownComplete(1, true), ok: 'yes' }, /ok must be a boolean/],
    [{ ...msg.metricsResponse('a', []), id: 'x'.repeat(MAX_ID_LENGTH + 1) }, /id must be a string of 1 to 128/],
    [{ ...msg.metricsResponse('a', []), id: '' }, /id must be a string/],
    [{ ...msg.metricsResponse('a', []), metrics: {} }, /metrics must be an array/],
    [{ ...msg.metricsResponse('a', []), metrics: [null] }, /metrics\[0\] must be a metric/],
    [{ ...msg.fatal(1, 'x'), message: 'x'.repeat(MAX_MESSAGE_LENGTH + 1) }, /message must be a string/],
    [{ ...msg.shutdown(1), deadline: Number.POSITIVE_INFINITY }, /deadline must be a finite time/],
    [{ ...msg.shutdown(1), deadline: 10n }, /deadline must be a finite time/],
    [{ v: 1, type: 'flotilla:nope' }, /^unknown type "flotilla:nope"$/],
    [{ v: 1, type: `flotilla:${'x'.repeat(1_000_000)}` }, /^unknown type "flotilla:x{31}…"$/],
    [null, /^not a message object \(null\)$/],
    [[listening], /not a message object \(array\)/],
    ['flotilla:listening', /not a message object \(string\)/],
    [Object.assign(Object.create({ v: 1, type: 'flotilla:shutdown' }), { deadline: 1 }), /not a message object/],
  ];
  for (const [value, reason] of cases) {
    assert.equal(isWorkerMessage(value), false, describeInvalid(value));
    assert.equal(isPrimaryMessage(value), false, describeInvalid(value));
    assert.match(describeInvalid(value), reason);
    assert.ok(describeInvalid(value).length < 200);
  }
});

test('metric families that could break the exposition or the aggregation are refused', () => {
  const counter = METRICS[0] as MetricFamily;
  const histogram = METRICS[1] as MetricFamily;
  const broken: unknown[] = [
    { ...counter, series: ['x{a="1"}\n# TYPE x gauge'] },
    { ...counter, series: ['x{a="1",a="2"}'] },
    { ...counter, series: ['x{a="1"'] },
    { ...counter, series: ['x{}'] },
    { ...counter, series: ['x{a="un"escaped"}'] },
    { ...counter, series: ['x{a="bad \\x escape"}'] },
    { ...counter, series: ['x{a="new\nline"}'] },
    { ...counter, series: ['1x'] },
    { ...counter, values: [] },
    { ...counter, values: [null] },
    { ...counter, values: ['Infinity'] },
    { ...counter, keys: [] },
    { ...counter, aggregator: 'constructor' },
    { ...counter, extra: 1 },
    { ...histogram, type: 'counter' },
    { ...histogram, buckets: [] },
    { ...histogram, buckets: ['"'] },
    { ...histogram, values: [1] },
    { ...histogram, series: ['le="1"', ''] },
    { ...histogram, series: ['route="/a"}', ''] },
    { ...histogram, series: ['route="/a",', ''] },
  ];
  for (const family of broken) {
    const message = msg.metricsResponse('m', [family as MetricFamily]);
    assert.equal(isWorkerMessage(message), false, JSON.stringify(family));
    assert.match(describeInvalid(message), /^flotilla:metrics-response: metrics\[0\] must be a metric family/);
  }
});

test("Node's and other libraries' messages are not flotilla messages", () => {
  for (const m of [{ cmd: 'NODE_CLUSTER', act: 'online' }, { type: 'prom-client:getMetricsReq', requestId: 1 }, 'hello', 42, undefined]) {
    assert.equal(isFlotillaMessage(m), false);
    assert.equal(isWorkerMessage(m), false);
    assert.equal(isPrimaryMessage(m), false);
  }
  assert.equal(isFlotillaMessage({ type: 'flotilla:whatever' }), true);
});

test('cyclic, hostile and huge values never make a guard or describeInvalid throw', () => {
  const cyclic: Record<string, unknown> = { v: 1, type: 'flotilla:fatal', pid: 1 };
  cyclic['message'] = cyclic;
  const throwing = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('trap');
      },
      getPrototypeOf() {
        throw new Error('trap');
      },
    },
  );
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const getter = Object.defineProperty({ v: 1, pid: 1, ok: true }, 'type', {
    enumerable: true,
    get() {
      throw new Error('getter');
    },
  });
  const huge = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
  for (const value of [cyclic, throwing, revoked, getter, huge, Symbol('s'), () => 1, 10n]) {
    assert.equal(isWorkerMessage(value), false);
    assert.equal(isPrimaryMessage(value), false);
    assert.equal(typeof isFlotillaMessage(value), 'boolean');
    assert.equal(typeof describeInvalid(value), 'string');
  }
  assert.match(describeInvalid(cyclic), /^flotilla:fatal: message must be a string/);
  assert.equal(describeInvalid(revoked), 'unreadable value');
});

test('property: arbitrary values never make a guard throw, and only valid messages pass', () => {
  const valid = new Set<string>(['flotilla:listening', 'flotilla:shutdown-complete', 'flotilla:metrics-response', 'flotilla:fatal']);
  const messageLike = fc.record(
    {
      v: fc.oneof(fc.constant(1), fc.anything()),
      type: fc.oneof(fc.constantFrom(...valid, 'flotilla:shutdown', 'flotilla:metrics-request'), fc.string()),
      pid: fc.oneof(fc.integer(), fc.anything()),
      id: fc.oneof(fc.string(), fc.anything()),
      ok: fc.oneof(fc.boolean(), fc.anything()),
      deadline: fc.oneof(fc.double(), fc.anything()),
      message: fc.string(),
      address: fc.oneof(fc.record({ host: fc.string(), port: fc.integer() }), fc.anything()),
      metrics: fc.oneof(fc.constant(METRICS), fc.anything()),
    },
    { requiredKeys: ['v', 'type'] },
  );
  fc.assert(
    fc.property(
      fc.oneof(fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }), messageLike),
      (value) => {
        const worker = isWorkerMessage(value);
        const primary = isPrimaryMessage(value);
        assert.equal(typeof describeInvalid(value), 'string');
        assert.equal(typeof isFlotillaMessage(value), 'boolean');
        assert.ok(!(worker && primary));
        if (worker) assert.ok(valid.has(value.type));
      },
    ),
    { numRuns: 2000 },
  );
});
