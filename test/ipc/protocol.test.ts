import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  describeInvalid,
  isFlotillaMessage,
  isPrimaryMessage,
  isWorkerMessage,
  MAX_MESSAGE_LENGTH,
  MAX_PEM_CHARS,
  MAX_ROUTE_LENGTH,
  MAX_ROUTES,
  type MetricFamily,
  msg,
  PROTOCOL_VERSION,
  type PrimaryMessage,
  type WorkerMessage,
} from '../../src/ipc/protocol.ts';
import { COUNTER_FAMILY, HISTOGRAM_FAMILY } from '../helpers/metric-families.ts';

const METRICS: MetricFamily[] = [COUNTER_FAMILY, HISTOGRAM_FAMILY];

const VITALS = { rss: 90_000_000, requests: 12, elu: 0.25, delayP50Ms: 10.1, delayP99Ms: 12.5, delayMaxMs: 40 };
const ROUTES = { inFlight: ['/books/:id', 'unmatched'], last: '/health' };
const NO_ROUTES = { inFlight: [], last: '' };

const WORKER: WorkerMessage[] = [
  msg.listening(123, { host: '0.0.0.0', port: 3000 }),
  msg.listening(1, { host: '::', port: 65535 }),
  msg.shutdownComplete(123, true),
  msg.shutdownComplete(123, false),
  msg.metrics(METRICS),
  msg.metrics(METRICS, true),
  msg.metrics([]),
  msg.pong(0, VITALS),
  msg.pong(Number.MAX_SAFE_INTEGER, { rss: 0, requests: 0, elu: 0, delayP50Ms: 0, delayP99Ms: 0, delayMaxMs: 0 }),
  msg.pong(1, VITALS, ROUTES),
  msg.fatal(123, 'boom'),
  msg.fatal(123, ''),
  msg.fatal(123, 'boom', ROUTES),
  msg.firstRequest(123),
  msg.handoffAck(true),
  msg.handoffAck(false),
  msg.serviceIdle(),
  msg.bootFailed(123, 'service', 'the service module threw: boom'),
  msg.bootFailed(123, 'address-in-use', 'port 3000 on 0.0.0.0 is already in use'),
  msg.bootFailed(123, 'service', ''),
  msg.rateLimitHits([{ id: 1, key: 'GET /login|60000|10.0.0.7', windowMs: 60_000, undo: false }]),
  msg.rateLimitHits(
    Array.from({ length: 1024 }, (_, i) => ({ id: Number.MAX_SAFE_INTEGER - i, key: 'x'.repeat(2048), windowMs: 1, undo: i % 2 === 0 })),
  ),
  msg.session(1, 'get', 'abc'),
  msg.session(2, 'set', 'x'.repeat(128), 'y'.repeat(1_048_576), 86_400_000),
  msg.session(3, 'delete', 'abc'),
];
const PRIMARY: PrimaryMessage[] = [
  msg.shutdown(Date.now() + 10_000),
  msg.shutdown(0, true),
  msg.ping(0),
  msg.ping(42),
  msg.connection(''),
  msg.connection(Buffer.from('GET / HTTP/1.1\r\n').toString('base64')),
  msg.handoffEnd(),
  msg.certificates({ cert: 'CERT', key: 'KEY' }),
  msg.rateLimitCounts([
    { id: 1, ok: true, count: 51, resetMs: 41_250.5 },
    { id: 2, ok: false, count: 0, resetMs: 0 },
  ]),
  msg.sessionResult(1, true, true, '{"user":1}', 3_600_000),
  msg.sessionResult(2, true),
  msg.sessionResult(3, false),
];

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

test('certificates: the pair as PEM text, an empty ca without one; a missing or oversized one is refused', () => {
  assert.deepEqual(msg.certificates({ cert: 'C', key: 'K' }), { v: 7, type: 'flotilla:certificates', cert: 'C', key: 'K', ca: '' });
  assert.ok(isPrimaryMessage(msg.certificates({ cert: 'C', key: 'K', ca: 'A' })));
  assert.ok(!isWorkerMessage(msg.certificates({ cert: 'C', key: 'K' })));
  assert.match(
    describeInvalid({ v: 7, type: 'flotilla:certificates', cert: '', key: 'K', ca: '' }),
    /^flotilla:certificates: cert must be a string/,
  );
  assert.match(describeInvalid({ v: 7, type: 'flotilla:certificates', cert: 'C', ca: '' }), /^flotilla:certificates: key is missing$/);
  const huge = 'x'.repeat(MAX_PEM_CHARS + 1);
  assert.match(
    describeInvalid({ v: 7, type: 'flotilla:certificates', cert: huge, key: 'K', ca: '' }),
    /^flotilla:certificates: cert must be a string/,
  );
});

test('the message shapes are the documented ones', () => {
  assert.equal(PROTOCOL_VERSION, 7);
  assert.deepEqual(msg.start('{}'), { v: 7, type: 'flotilla:start', start: '{}' });
  assert.deepEqual(msg.listening(7, { host: 'h', port: 1 }), { v: 7, type: 'flotilla:listening', pid: 7, address: { host: 'h', port: 1 } });
  assert.deepEqual(msg.shutdownComplete(7, true), { v: 7, type: 'flotilla:shutdown-complete', pid: 7, ok: true });
  assert.deepEqual(msg.shutdown(5), { v: 7, type: 'flotilla:shutdown', deadline: 5, retire: false });
  assert.deepEqual(msg.shutdown(5, true), { v: 7, type: 'flotilla:shutdown', deadline: 5, retire: true });
  assert.deepEqual(msg.ping(3), { v: 7, type: 'flotilla:ping', seq: 3 });
  assert.deepEqual(msg.metrics([]), { v: 7, type: 'flotilla:metrics', final: false, metrics: [] });
  assert.deepEqual(msg.metrics(METRICS, true), { v: 7, type: 'flotilla:metrics', final: true, metrics: METRICS });
  assert.deepEqual(msg.pong(3, VITALS), { v: 7, type: 'flotilla:pong', seq: 3, ...VITALS, routes: NO_ROUTES });
  assert.deepEqual(msg.pong(3, VITALS, ROUTES), { v: 7, type: 'flotilla:pong', seq: 3, ...VITALS, routes: ROUTES });
  assert.deepEqual(msg.bootFailed(7, 'address-in-use', 'taken'), {
    v: 7,
    type: 'flotilla:boot-failed',
    pid: 7,
    kind: 'address-in-use',
    message: 'taken',
  });
  assert.deepEqual(msg.fatal(7, 'boom'), { v: 7, type: 'flotilla:fatal', pid: 7, message: 'boom', routes: NO_ROUTES });
  assert.deepEqual(msg.fatal(7, 'boom', ROUTES), { v: 7, type: 'flotilla:fatal', pid: 7, message: 'boom', routes: ROUTES });
  assert.deepEqual(msg.firstRequest(7), { v: 7, type: 'flotilla:first-request', pid: 7 });
  const hit = { id: 9, key: 'k', windowMs: 1000, undo: false };
  assert.deepEqual(msg.rateLimitHits([hit]), { v: 7, type: 'flotilla:rate-limit-hits', hits: [hit] });
  const count = { id: 9, ok: true, count: 3, resetMs: 500 };
  assert.deepEqual(msg.rateLimitCounts([count]), { v: 7, type: 'flotilla:rate-limit-counts', counts: [count] });
  assert.deepEqual(msg.publish('books', 'AQI=', true), { v: 7, type: 'flotilla:publish', topic: 'books', data: 'AQI=', binary: true });
  assert.deepEqual(msg.deliver('books', '{}', false), { v: 7, type: 'flotilla:deliver', topic: 'books', data: '{}', binary: false });
});

test('publish and deliver: valid each in its direction; a topic out of bounds or a missing field is not', () => {
  assert.ok(isWorkerMessage(msg.publish('books', 'x', false)));
  assert.ok(isPrimaryMessage(msg.deliver('books', 'x', false)));
  assert.ok(!isPrimaryMessage(msg.publish('books', 'x', false)));
  assert.ok(!isWorkerMessage({ ...msg.publish('', 'x', false) }));
  assert.ok(!isWorkerMessage({ ...msg.publish('t'.repeat(257), 'x', false) }));
  assert.match(describeInvalid({ v: 7, type: 'flotilla:deliver', topic: 'books', data: 'x' }), /^flotilla:deliver: binary is missing$/);
});

test('rate-limit messages with a bad batch, id, key or window are refused with a reason', () => {
  const hit = { id: 1, key: 'k', windowMs: 1000, undo: false };
  const hits = (...h: unknown[]) => ({ ...msg.rateLimitHits([hit]), hits: h });
  assert.equal(describeInvalid(hits()), 'flotilla:rate-limit-hits: hits must be an array of 1 to 1024 entries');
  assert.equal(describeInvalid(hits(...Array(1025).fill(hit))), 'flotilla:rate-limit-hits: hits must be an array of 1 to 1024 entries');
  assert.equal(describeInvalid(hits(hit, { ...hit, id: 0 })), 'flotilla:rate-limit-hits: hits[1].id must be a positive integer');
  assert.equal(
    describeInvalid(hits({ ...hit, key: '' })),
    'flotilla:rate-limit-hits: hits[0].key must be a string of 1 to 2048 characters',
  );
  assert.equal(
    describeInvalid(hits({ ...hit, key: 'x'.repeat(2049) })),
    'flotilla:rate-limit-hits: hits[0].key must be a string of 1 to 2048 characters',
  );
  assert.equal(
    describeInvalid(hits({ ...hit, windowMs: 1.5 })),
    'flotilla:rate-limit-hits: hits[0].windowMs must be a positive integer of ms',
  );
  assert.equal(describeInvalid(hits({ ...hit, extra: 1 })), 'flotilla:rate-limit-hits: hits[0].unexpected field "extra"');
  assert.equal(describeInvalid(hits('k')), 'flotilla:rate-limit-hits: hits[0] must be an object');
  const count = { id: 1, ok: true, count: 1, resetMs: 1 };
  const counts = (...c: unknown[]) => ({ ...msg.rateLimitCounts([count]), counts: c });
  assert.equal(
    describeInvalid(counts({ ...count, count: -1 })),
    'flotilla:rate-limit-counts: counts[0].count must be a finite number >= 0',
  );
  assert.equal(describeInvalid(counts({ ...count, ok: 'yes' })), 'flotilla:rate-limit-counts: counts[0].ok must be a boolean');
});

test('session messages with a bad op, id or data are refused with a reason', () => {
  const op = msg.session(1, 'get', 'abc');
  assert.deepEqual(op, { v: 7, type: 'flotilla:session', id: 1, op: 'get', sid: 'abc', data: '', ttlMs: 0 });
  assert.equal(describeInvalid({ ...op, op: 'list' }), "flotilla:session: op must be 'get', 'set' or 'delete'");
  assert.equal(describeInvalid({ ...op, sid: '' }), 'flotilla:session: sid must be a string of 1 to 128 characters');
  assert.equal(describeInvalid({ ...op, sid: 'x'.repeat(129) }), 'flotilla:session: sid must be a string of 1 to 128 characters');
  assert.equal(
    describeInvalid({ ...op, data: 'x'.repeat(1_048_577) }),
    'flotilla:session: data must be a string of 0 to 1048576 characters',
  );
  assert.equal(describeInvalid({ ...op, ttlMs: -1 }), 'flotilla:session: ttlMs must be a finite number >= 0');
  assert.equal(describeInvalid({ ...op, id: 0 }), 'flotilla:session: id must be a positive integer');
  const result = msg.sessionResult(1, true, true, '{}', 10);
  assert.deepEqual(result, { v: 7, type: 'flotilla:session-result', id: 1, ok: true, found: true, data: '{}', ttlLeftMs: 10 });
  assert.equal(describeInvalid({ ...result, found: 1 }), 'flotilla:session-result: found must be a boolean');
});

test('a pong carries the vitals and nothing else, whatever object they come in', () => {
  const pong = msg.pong(1, { ...VITALS, extra: 'not sent' } as typeof VITALS);
  assert.deepEqual(Object.keys(pong).sort(), [
    'delayMaxMs',
    'delayP50Ms',
    'delayP99Ms',
    'elu',
    'requests',
    'routes',
    'rss',
    'seq',
    'type',
    'v',
  ]);
  assert.ok(isWorkerMessage(pong), describeInvalid(pong));
});

test('fatal and boot-failure messages are truncated so that they stay valid', () => {
  for (const m of [msg.fatal(1, 'x'.repeat(MAX_MESSAGE_LENGTH * 3)), msg.bootFailed(1, 'service', 'x'.repeat(MAX_MESSAGE_LENGTH * 3))]) {
    assert.equal(m.message.length, MAX_MESSAGE_LENGTH);
    assert.ok(m.message.endsWith('…'));
    assert.ok(isWorkerMessage(m), describeInvalid(m));
  }
  assert.equal(
    msg.bootFailed(1, 'service', 'x'.repeat(MAX_MESSAGE_LENGTH)).message.length,
    MAX_MESSAGE_LENGTH,
    'the longest message is kept whole',
  );
});

test('routes are bounded so that pongs and fatal messages stay valid', () => {
  const many = { inFlight: Array.from({ length: MAX_ROUTES * 2 }, (_, i) => `/r${i}`), last: 'x'.repeat(MAX_ROUTE_LENGTH * 2) };
  for (const m of [msg.pong(1, VITALS, many), msg.fatal(1, 'boom', many)]) {
    assert.equal(m.routes.inFlight.length, MAX_ROUTES);
    assert.equal(m.routes.last.length, MAX_ROUTE_LENGTH);
    assert.ok(m.routes.last.endsWith('…'));
    assert.ok(isWorkerMessage(m), describeInvalid(m));
  }
  const long = msg.fatal(1, 'boom', { inFlight: ['y'.repeat(MAX_ROUTE_LENGTH + 1)], last: '' });
  assert.equal(long.routes.inFlight[0]?.length, MAX_ROUTE_LENGTH);
});

test('mutated messages fail without throwing, with a reason', () => {
  const listening = msg.listening(123, { host: 'h', port: 3000 });
  const pong = msg.pong(7, VITALS);
  const ping = msg.ping(7);
  const metrics = msg.metrics(METRICS);
  const bootFailed = msg.bootFailed(123, 'service', 'boom');
  const fatal = msg.fatal(123, 'boom', ROUTES);
  const cases: [unknown, RegExp][] = [
    [{ ...listening, v: 2 }, /^flotilla:listening: v must be 7$/],
    [{ ...listening, v: 8 }, /^flotilla:listening: v must be 7$/],
    [{ ...listening, v: '5' }, /v must be 7/],
    [{ ...ping, v: 2 }, /^flotilla:ping: v must be 7$/],
    [{ ...listening, pid: undefined }, /pid must be a positive integer/],
    [{ v: 7, type: 'flotilla:listening', address: listening.address }, /pid is missing/],
    [{ ...listening, pid: -1 }, /pid must be a positive integer/],
    [{ ...listening, pid: 1.5 }, /pid must be/],
    [{ ...listening, address: { host: 'h', port: 0 } }, /address\.port must be a port/],
    [{ ...listening, address: { host: '', port: 1 } }, /address\.host must be a string/],
    [{ ...listening, address: { host: 'h', port: 1, extra: 1 } }, /address\.unexpected field "extra"/],
    [{ ...listening, address: [] }, /address must be an object/],
    [{ ...listening, evil: () => 1 }, /unexpected field "evil"/],
    [{ ...msg.shutdownComplete(1, true), ok: 'yes' }, /ok must be a boolean/],
    [{ ...metrics, metrics: {} }, /^flotilla:metrics: metrics must be an array/],
    [{ ...metrics, metrics: [null] }, /^flotilla:metrics: metrics\[0\] must be a metric/],
    [{ ...metrics, metrics: [...METRICS, { name: 'x' }] }, /^flotilla:metrics: metrics\[2\] must be a metric/],
    [{ ...metrics, final: undefined }, /^flotilla:metrics: final must be a boolean$/],
    [{ ...metrics, final: 'true' }, /^flotilla:metrics: final must be a boolean$/],
    [{ ...metrics, final: 1 }, /^flotilla:metrics: final must be a boolean$/],
    [{ v: 7, type: 'flotilla:metrics', metrics: [] }, /^flotilla:metrics: final is missing$/],
    [{ ...metrics, id: 'm-1' }, /^flotilla:metrics: unexpected field "id"$/],
    [{ v: 7, type: 'flotilla:ping' }, /^flotilla:ping: seq is missing$/],
    [{ ...ping, seq: -1 }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, seq: 1.5 }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, seq: '1' }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, seq: Number.NaN }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, seq: 2 ** 53 }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, seq: 1n }, /^flotilla:ping: seq must be a non-negative integer$/],
    [{ ...ping, id: 'm-1' }, /^flotilla:ping: unexpected field "id"$/],
    [{ ...pong, seq: -1 }, /^flotilla:pong: seq must be a non-negative integer$/],
    [{ ...pong, seq: 0.5 }, /^flotilla:pong: seq must be a non-negative integer$/],
    [{ ...pong, seq: undefined }, /^flotilla:pong: seq must be a non-negative integer$/],
    [{ ...pong, rss: -1 }, /^flotilla:pong: rss must be a finite number >= 0$/],
    [{ ...pong, rss: '1' }, /^flotilla:pong: rss must be a finite number >= 0$/],
    [{ ...pong, requests: Number.POSITIVE_INFINITY }, /^flotilla:pong: requests must be a finite number >= 0$/],
    [{ ...pong, elu: Number.NaN }, /^flotilla:pong: elu must be a finite number >= 0$/],
    [{ ...pong, delayP50Ms: -0.5 }, /^flotilla:pong: delayP50Ms must be a finite number >= 0$/],
    [{ ...pong, delayP99Ms: null }, /^flotilla:pong: delayP99Ms must be a finite number >= 0$/],
    [{ ...pong, delayMaxMs: 10n }, /^flotilla:pong: delayMaxMs must be a finite number >= 0$/],
    [
      { v: 7, type: 'flotilla:pong', seq: 1, rss: 1, requests: 1, elu: 0, delayP50Ms: 0, delayP99Ms: 0, routes: ROUTES },
      /^flotilla:pong: delayMaxMs is missing$/,
    ],
    [{ ...pong, cpu: 1 }, /^flotilla:pong: unexpected field "cpu"$/],
    [{ ...VITALS, v: 7, type: 'flotilla:pong', seq: 1 }, /^flotilla:pong: routes is missing$/],
    [{ ...pong, routes: [] }, /^flotilla:pong: routes must be an object$/],
    [{ ...pong, routes: { inFlight: [] } }, /^flotilla:pong: routes\.last is missing$/],
    [{ ...pong, routes: { ...ROUTES, extra: 1 } }, /^flotilla:pong: routes\.unexpected field "extra"$/],
    [{ ...fatal, routes: { ...ROUTES, inFlight: '/a' } }, /^flotilla:fatal: routes\.inFlight must be an array of at most 32 routes$/],
    [{ ...fatal, routes: { ...ROUTES, inFlight: Array(MAX_ROUTES + 1).fill('/a') } }, /routes\.inFlight must be an array of at most/],
    [{ ...fatal, routes: { ...ROUTES, inFlight: ['/a', 7] } }, /^flotilla:fatal: routes\.inFlight\[1\] must be a string of 0 to 1024/],
    [{ ...fatal, routes: { ...ROUTES, last: 'x'.repeat(MAX_ROUTE_LENGTH + 1) } }, /^flotilla:fatal: routes\.last must be a string/],
    [{ v: 7, type: 'flotilla:fatal', pid: 1, message: 'boom' }, /^flotilla:fatal: routes is missing$/],
    [{ v: 7, type: 'flotilla:first-request' }, /^flotilla:first-request: pid is missing$/],
    [{ ...msg.firstRequest(1), pid: 0 }, /^flotilla:first-request: pid must be a positive integer$/],
    [{ ...msg.firstRequest(1), requests: 1 }, /^flotilla:first-request: unexpected field "requests"$/],
    [{ ...bootFailed, kind: 'crash' }, /^flotilla:boot-failed: kind must be 'service', 'address-in-use' or 'config'$/],
    [{ ...bootFailed, kind: 'Service' }, /^flotilla:boot-failed: kind must be/],
    [{ ...bootFailed, kind: undefined }, /^flotilla:boot-failed: kind must be/],
    [{ ...bootFailed, kind: ['service'] }, /^flotilla:boot-failed: kind must be/],
    [{ ...bootFailed, pid: 0 }, /^flotilla:boot-failed: pid must be a positive integer$/],
    [{ ...bootFailed, message: 'x'.repeat(MAX_MESSAGE_LENGTH + 1) }, /^flotilla:boot-failed: message must be a string of 0 to 4096/],
    [{ ...bootFailed, message: 42 }, /^flotilla:boot-failed: message must be a string/],
    [{ v: 7, type: 'flotilla:boot-failed', pid: 1, kind: 'service' }, /^flotilla:boot-failed: message is missing$/],
    [{ ...msg.fatal(1, 'x'), message: 'x'.repeat(MAX_MESSAGE_LENGTH + 1) }, /message must be a string/],
    [{ ...msg.shutdown(1), deadline: Number.POSITIVE_INFINITY }, /deadline must be a finite time/],
    [{ ...msg.shutdown(1), deadline: 10n }, /deadline must be a finite time/],
    [{ v: 7, type: 'flotilla:nope' }, /^unknown type "flotilla:nope"$/],
    [{ v: 7, type: 'flotilla:metrics-request', id: 'm-1' }, /^unknown type "flotilla:metrics-request"$/],
    [{ v: 7, type: 'flotilla:metrics-response', id: 'm-1', metrics: [] }, /^unknown type "flotilla:metrics-response"$/],
    [{ v: 1, type: 'flotilla:metrics-response', id: 'm-1', metrics: [] }, /^unknown type "flotilla:metrics-response"$/],
    [{ v: 7, type: `flotilla:${'x'.repeat(1_000_000)}` }, /^unknown type "flotilla:x{31}…"$/],
    [null, /^not a message object \(null\)$/],
    [[listening], /not a message object \(array\)/],
    ['flotilla:listening', /not a message object \(string\)/],
    [Object.assign(Object.create({ v: 7, type: 'flotilla:shutdown' }), { deadline: 1, retire: false }), /not a message object/],
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
    for (const message of [msg.metrics([family as MetricFamily]), msg.metrics([family as MetricFamily], true)]) {
      assert.equal(isWorkerMessage(message), false, JSON.stringify(family));
      assert.match(describeInvalid(message), /^flotilla:metrics: metrics\[0\] must be a metric family/);
    }
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
  const cyclic: Record<string, unknown> = { v: 7, type: 'flotilla:fatal', pid: 1 };
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
  const getter = Object.defineProperty({ v: 7, pid: 1, ok: true }, 'type', {
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
  const worker = new Set<string>([
    'flotilla:listening',
    'flotilla:shutdown-complete',
    'flotilla:metrics',
    'flotilla:pong',
    'flotilla:fatal',
    'flotilla:boot-failed',
    'flotilla:first-request',
    'flotilla:handoff-ack',
    'flotilla:service-idle',
    'flotilla:rate-limit-hits',
    'flotilla:session',
  ]);
  const primary = new Set<string>([
    'flotilla:shutdown',
    'flotilla:ping',
    'flotilla:connection',
    'flotilla:certificates',
    'flotilla:handoff-end',
    'flotilla:rate-limit-counts',
    'flotilla:session-result',
  ]);
  const removed = ['flotilla:metrics-request', 'flotilla:metrics-response'];
  const amount = () => fc.oneof(fc.double(), fc.nat(), fc.anything());
  const messageLike = fc.record(
    {
      v: fc.oneof(fc.constant(PROTOCOL_VERSION), fc.constant(1), fc.anything()),
      type: fc.oneof(fc.constantFrom(...worker, ...primary, ...removed), fc.string()),
      pid: fc.oneof(fc.integer(), fc.anything()),
      id: fc.oneof(fc.string(), fc.anything()),
      ok: fc.oneof(fc.boolean(), fc.anything()),
      final: fc.oneof(fc.boolean(), fc.anything()),
      deadline: fc.oneof(fc.double(), fc.anything()),
      seq: fc.oneof(fc.integer(), fc.maxSafeNat(), fc.double(), fc.anything()),
      rss: amount(),
      requests: amount(),
      elu: amount(),
      delayP50Ms: amount(),
      delayP99Ms: amount(),
      delayMaxMs: amount(),
      routes: fc.oneof(fc.constant(ROUTES), fc.record({ inFlight: fc.array(fc.string()), last: fc.string() }), fc.anything()),
      kind: fc.oneof(fc.constantFrom('service', 'address-in-use', 'config'), fc.anything()),
      accepted: fc.oneof(fc.boolean(), fc.anything()),
      head: fc.oneof(fc.base64String(), fc.anything()),
      message: fc.string(),
      address: fc.oneof(fc.record({ host: fc.string(), port: fc.integer() }), fc.anything()),
      metrics: fc.oneof(fc.constant(METRICS), fc.anything()),
    },
    { requiredKeys: ['v', 'type'] },
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }),
        messageLike,
        fc.constantFrom<unknown>(...WORKER, ...PRIMARY),
      ),
      (value) => {
        const toPrimary = isWorkerMessage(value);
        const toWorker = isPrimaryMessage(value);
        const description = describeInvalid(value);
        assert.equal(typeof description, 'string');
        assert.equal(typeof isFlotillaMessage(value), 'boolean');
        assert.ok(!(toPrimary && toWorker));
        if (toPrimary) {
          assert.ok(worker.has(value.type));
          assert.equal(value.v, PROTOCOL_VERSION);
          assert.equal(description, `${value.type}: valid, but it goes from a worker to the primary`);
        }
        if (toWorker) {
          assert.ok(primary.has(value.type));
          assert.equal(value.v, PROTOCOL_VERSION);
          assert.equal(description, `${value.type}: valid, but it goes from the primary to a worker`);
        }
      },
    ),
    { numRuns: 2000 },
  );
});
