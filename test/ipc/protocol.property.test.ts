import { describe, type TestContext, test } from 'node:test';
import fc from 'fast-check';
import {
  describeInvalid,
  isPrimaryMessage,
  isWorkerMessage,
  MAX_HEAD_BYTES,
  MAX_HOST_LENGTH,
  MAX_MESSAGE_ID,
  MAX_PEM_CHARS,
  MAX_RATE_BATCH,
  MAX_RATE_KEY_LENGTH,
  MAX_ROUTE_LENGTH,
  MAX_ROUTES,
  MAX_SESSION_CHARS,
  MAX_SESSION_ID_LENGTH,
  MAX_START_CHARS,
  MAX_TOPIC_LENGTH,
  type MetricFamily,
  msg,
  PROTOCOL_VERSION,
} from '../../src/ipc/protocol.ts';
import { COUNTER_FAMILY, HISTOGRAM_FAMILY } from '../helpers/metric-families.ts';

// Every message of the protocol's table, built by its constructor from arbitrary arguments, passes the
// guard of its direction; the same message with a field dropped, a field of the wrong type, a value out
// of its field's bounds, or an unexpected field is refused by both guards. A check loosened in
// src/ipc/protocol.ts or src/ipc/fields.ts makes this fail.

const RUNS = 100;

/** A field's values: arbitrary right ones, and (when its type has bounds) arbitrary wrong ones of the right type. */
interface FieldValues<T> {
  readonly valid: fc.Arbitrary<T>;
  readonly invalid?: fc.Arbitrary<unknown>;
}

const tooLong = (max: number): string => 'x'.repeat(max + 1);
const text = (min: number, max: number): FieldValues<string> => ({
  valid: fc.oneof(fc.string({ minLength: min, maxLength: Math.min(max, 40) }), fc.constant('x'.repeat(max))),
  invalid: fc.constantFrom(...(min > 0 ? [''] : []), tooLong(max)),
});
const integer = (min: number, max: number, invalid: number[]): FieldValues<number> => ({
  valid: fc.integer({ min, max }),
  invalid: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, min + 0.5, ...invalid),
});
/** A finite number, zero or more (`amount`, a deadline). */
const AMOUNT: FieldValues<number> = {
  valid: fc.double({ min: 0, max: 1e15, noNaN: true }),
  invalid: fc.oneof(fc.double({ max: -Number.MIN_VALUE, noNaN: true }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY)),
};
const PID = integer(1, 2 ** 31, [0, -1, 2 ** 31 + 1]);
const PORT = integer(1, 65_535, [0, -1, 65_536]);
const SEQ = integer(0, Number.MAX_SAFE_INTEGER, [-1, 2 ** 53]);
const ID = integer(1, MAX_MESSAGE_ID, [0, -1, 2 ** 53]);
const WINDOW_MS = integer(1, 2 ** 40, [0, -1, 2 ** 53]);
const HOST = text(1, MAX_HOST_LENGTH);
const ROUTE = text(0, MAX_ROUTE_LENGTH);
const TOPIC = text(1, MAX_TOPIC_LENGTH);
const SESSION_ID = text(1, MAX_SESSION_ID_LENGTH);
const SESSION_DATA = text(0, MAX_SESSION_CHARS);
const PEM = text(1, MAX_PEM_CHARS);
const CA = text(0, MAX_PEM_CHARS);
const START = text(2, MAX_START_CHARS);
const HEAD = text(0, Math.ceil(MAX_HEAD_BYTES / 3) * 4);
/** Published data: its bound (64 MiB in base64) is too large to build here, so only its right values. */
const DATA: FieldValues<string> = { valid: fc.string({ maxLength: 40 }) };
const oneOf = <const T extends string>(...values: T[]): FieldValues<T> => ({
  valid: fc.constantFrom(...values),
  invalid: fc.constantFrom('', 'other', values.join('|')),
});
const KIND = oneOf('service', 'address-in-use', 'config');
const OP = oneOf('get', 'set', 'delete');

/** Any text, as a fatal message or a route template: the constructors cut what is too long. */
const anyText = fc.oneof(fc.string({ maxLength: 40 }), fc.constant('y'.repeat(MAX_ROUTE_LENGTH + 5_000)));
const routes = fc.record({ inFlight: fc.array(anyText, { maxLength: MAX_ROUTES + 4 }), last: anyText });
const ROUTES_BOUNDS = {
  'routes.inFlight': fc.constant(Array.from({ length: MAX_ROUTES + 1 }, () => '/a')),
  'routes.inFlight.*': ROUTE.invalid,
  'routes.last': ROUTE.invalid,
};
const vitals = fc.record({
  rss: AMOUNT.valid,
  requests: AMOUNT.valid,
  elu: AMOUNT.valid,
  delayP50Ms: AMOUNT.valid,
  delayP99Ms: AMOUNT.valid,
  delayMaxMs: AMOUNT.valid,
});
const FAMILIES: MetricFamily[] = [
  COUNTER_FAMILY,
  { name: 'up', help: '', type: 'gauge', aggregator: 'first', series: ['up'], values: ['NaN'] },
  HISTOGRAM_FAMILY,
];
const hit = fc.record({ id: ID.valid, key: text(1, MAX_RATE_KEY_LENGTH).valid, windowMs: WINDOW_MS.valid, undo: fc.boolean() });
const count = fc.record({ id: ID.valid, ok: fc.boolean(), count: AMOUNT.valid, resetMs: AMOUNT.valid });
const batch = <T>(entry: fc.Arbitrary<T>) => fc.array(entry, { minLength: 1, maxLength: 8 });
const batchBounds = (name: string, fields: Record<string, FieldValues<unknown>>, entry: unknown): Bounds => ({
  [name]: fc.constantFrom(
    [],
    Array.from({ length: MAX_RATE_BATCH + 1 }, () => entry),
  ),
  ...Object.fromEntries(Object.entries(fields).flatMap(([key, f]) => (f.invalid === undefined ? [] : [[`${name}.*.${key}`, f.invalid]]))),
});

/** Wrong values of the right type, by the path of the field they go in (`*`: any entry of an array). */
type Bounds = Record<string, fc.Arbitrary<unknown> | undefined>;

type Make = typeof msg;
/** A message of the table: the guard that must accept it, its constructor's arguments, its fields' bounds. */
interface Case<K extends keyof Make> {
  readonly to: 'primary' | 'worker';
  readonly args: fc.Arbitrary<Parameters<Make[K]>>;
  readonly bounds: Bounds;
}

const CASES: { readonly [K in keyof Make]: Case<K> } = {
  listening: {
    to: 'primary',
    args: fc.tuple(PID.valid, fc.record({ host: HOST.valid, port: PORT.valid })),
    bounds: { pid: PID.invalid, 'address.host': HOST.invalid, 'address.port': PORT.invalid },
  },
  shutdownComplete: { to: 'primary', args: fc.tuple(PID.valid, fc.boolean()), bounds: { pid: PID.invalid } },
  metrics: {
    to: 'primary',
    args: fc.tuple(fc.subarray(FAMILIES), fc.boolean()),
    bounds: { 'metrics.*': fc.constant({ ...FAMILIES[0], name: '1 not a name' }) },
  },
  pong: {
    to: 'primary',
    args: fc.tuple(SEQ.valid, vitals, routes),
    bounds: {
      seq: SEQ.invalid,
      ...Object.fromEntries(['rss', 'requests', 'elu', 'delayP50Ms', 'delayP99Ms', 'delayMaxMs'].map((k) => [k, AMOUNT.invalid])),
      ...ROUTES_BOUNDS,
    },
  },
  fatal: { to: 'primary', args: fc.tuple(PID.valid, anyText, routes), bounds: { pid: PID.invalid, ...ROUTES_BOUNDS } },
  bootFailed: { to: 'primary', args: fc.tuple(PID.valid, KIND.valid, anyText), bounds: { pid: PID.invalid, kind: KIND.invalid } },
  handoffAck: { to: 'primary', args: fc.tuple(fc.boolean()), bounds: {} },
  serviceIdle: { to: 'primary', args: fc.constant([]), bounds: {} },
  serviceReady: { to: 'primary', args: fc.constant([]), bounds: {} },
  awaitServe: { to: 'primary', args: fc.constant([]), bounds: {} },
  firstRequest: { to: 'primary', args: fc.tuple(PID.valid), bounds: { pid: PID.invalid } },
  publish: {
    to: 'primary',
    args: fc.tuple(TOPIC.valid, DATA.valid, fc.boolean()),
    bounds: { topic: TOPIC.invalid },
  },
  rateLimitHits: {
    to: 'primary',
    args: fc.tuple(batch(hit)),
    bounds: batchBounds(
      'hits',
      { id: ID, key: text(1, MAX_RATE_KEY_LENGTH), windowMs: WINDOW_MS },
      { id: 1, key: 'k', windowMs: 1, undo: false },
    ),
  },
  session: {
    to: 'primary',
    args: fc.tuple(ID.valid, OP.valid, SESSION_ID.valid, SESSION_DATA.valid, AMOUNT.valid),
    bounds: { id: ID.invalid, op: OP.invalid, sid: SESSION_ID.invalid, data: SESSION_DATA.invalid, ttlMs: AMOUNT.invalid },
  },
  shutdown: { to: 'worker', args: fc.tuple(AMOUNT.valid, fc.boolean()), bounds: { deadline: AMOUNT.invalid } },
  ping: { to: 'worker', args: fc.tuple(SEQ.valid), bounds: { seq: SEQ.invalid } },
  connection: { to: 'worker', args: fc.tuple(HEAD.valid), bounds: { head: HEAD.invalid } },
  handoffEnd: { to: 'worker', args: fc.constant([]), bounds: {} },
  certificates: {
    to: 'worker',
    args: fc.tuple(fc.record({ cert: PEM.valid, key: PEM.valid, ca: CA.valid }, { requiredKeys: ['cert', 'key'] })),
    bounds: { cert: PEM.invalid, key: PEM.invalid, ca: CA.invalid },
  },
  start: { to: 'worker', args: fc.tuple(START.valid), bounds: { start: START.invalid } },
  serve: { to: 'worker', args: fc.constant([]), bounds: {} },
  deliver: { to: 'worker', args: fc.tuple(TOPIC.valid, DATA.valid, fc.boolean()), bounds: { topic: TOPIC.invalid } },
  rateLimitCounts: {
    to: 'worker',
    args: fc.tuple(batch(count)),
    bounds: batchBounds('counts', { id: ID, count: AMOUNT, resetMs: AMOUNT }, { id: 1, ok: true, count: 0, resetMs: 0 }),
  },
  sessionResult: {
    to: 'worker',
    args: fc.tuple(ID.valid, fc.boolean(), fc.boolean(), SESSION_DATA.valid, AMOUNT.valid),
    bounds: { id: ID.invalid, data: SESSION_DATA.invalid, ttlLeftMs: AMOUNT.invalid },
  },
};

/** Every message's envelope has bounds too: another version, a type the protocol does not have. */
const ENVELOPE: Bounds = {
  v: fc.integer().filter((v) => v !== PROTOCOL_VERSION),
  type: fc.oneof(
    fc.string({ maxLength: 20 }).filter((t) => !t.startsWith('flotilla:')),
    fc.constantFrom('flotilla:unknown', 'flotilla:', 'FLOTILLA:ping'),
  ),
};

type Path = readonly (string | number)[];
const patternOf = (path: Path): string => path.map((step) => (typeof step === 'number' ? '*' : step)).join('.');
const isPlain = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The fields of a message, nested ones included (not inside a metric family: metric-family.ts's own
 * checks), with their parents; of an array, its first and its last entry (the guards check each alike).
 */
function fieldsOf(value: unknown, path: Path = []): { path: Path; value: unknown; inRecord: boolean }[] {
  if (patternOf(path) === 'metrics.*') return [];
  const ends = (list: unknown[]) =>
    [...new Set([0, list.length - 1])].filter((i) => i >= 0 && i < list.length).map((i): [number, unknown] => [i, list[i]]);
  const entries: [string | number, unknown][] = Array.isArray(value) ? ends(value) : isPlain(value) ? Object.entries(value) : [];
  return entries.flatMap(([step, child]) => [
    { path: [...path, step], value: child, inRecord: !Array.isArray(value) },
    ...fieldsOf(child, [...path, step]),
  ]);
}

/** The records of a message: the message itself, and each nested one (a metric family aside). */
const recordsOf = (message: object): Path[] => [
  [],
  ...fieldsOf(message)
    .filter((f) => isPlain(f.value) && patternOf(f.path) !== 'metrics.*')
    .map((f) => f.path),
];

const shown = (x: unknown): string =>
  typeof x === 'string' && x.length > 20 ? `${x.length} characters` : (JSON.stringify(x) ?? String(x));
const kindOf = (x: unknown): string => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
/** A value of another type than `like`'s. */
const otherKind = (like: unknown) =>
  fc
    .oneof(
      fc.string({ maxLength: 8 }),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.bigInt(),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 3 }),
    )
    .filter((x) => kindOf(x) !== kindOf(like));

/** What `value` holds at `path`. */
const at = (value: object, path: Path): Record<string | number, unknown> =>
  path.reduce<Record<string | number, unknown>>((x, step) => x[step] as Record<string | number, unknown>, value as Record<string, unknown>);

/**
 * `value` changed at `path`: `remove` drops the field, else it takes `to`. The records and arrays on
 * the path are copies, the rest is shared (a message's long strings are not copied).
 */
function changed(value: unknown, path: Path, change: { remove: true } | { to: unknown }): unknown {
  const [step, ...rest] = path;
  if (step === undefined) return 'to' in change ? change.to : undefined;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  if (rest.length === 0 && 'remove' in change) delete copy[step];
  // defined, not assigned: a key `__proto__` is a field like any other
  else
    Object.defineProperty(copy, step, { value: changed(copy[step], rest, change), enumerable: true, writable: true, configurable: true });
  return copy;
}

/**
 * Every wrong message made of `message`, and what was done to it: each field dropped (an entry of an
 * array aside: fewer entries are no error), each field of another type, each bounded field out of its
 * bounds, and an unexpected field added to each record. `gen` draws the wrong values.
 */
function malformed(message: object, bounds: Bounds, gen: fc.GeneratorValue): { what: string; message: unknown }[] {
  const wrong: { what: string; message: unknown }[] = [];
  for (const { path, value, inRecord } of fieldsOf(message)) {
    const name = path.join('.');
    if (inRecord) wrong.push({ what: `${name} dropped`, message: changed(message, path, { remove: true }) });
    const other = gen(otherKind, value);
    wrong.push({ what: `${name} as ${kindOf(other)}`, message: changed(message, path, { to: other }) });
    const outOfBounds = { ...ENVELOPE, ...bounds }[patternOf(path)];
    if (outOfBounds !== undefined) {
      const out = gen(() => outOfBounds);
      wrong.push({ what: `${name} = ${shown(out)}`, message: changed(message, path, { to: out }) });
    }
  }
  for (const path of recordsOf(message)) {
    const key = gen(() => fc.string({ maxLength: 10 }).filter((k) => !Object.hasOwn(at(message, path), k)));
    const junk = gen(() => fc.jsonValue({ maxDepth: 1 }));
    wrong.push({ what: `${[...path, key].join('.')} added`, message: changed(message, [...path, key], { to: junk }) });
  }
  return wrong;
}

const guardOf = (to: 'primary' | 'worker') => (to === 'primary' ? isWorkerMessage : isPrimaryMessage);

describe('the IPC table, property-tested', () => {
  test('the cases name every message of the table, each guarded for its direction', (t: TestContext) => {
    t.assert.deepStrictEqual(Object.keys(CASES).sort(), Object.keys(msg).sort());
  });

  for (const [name, c] of Object.entries(CASES) as [keyof Make, Case<keyof Make>][]) {
    const make = msg[name] as (...args: unknown[]) => { type: string };
    const built = c.args.map((args) => make(...args));

    test(`${name}: what its constructor builds passes its guard, not the other side's`, () => {
      fc.assert(
        fc.property(built, (message) => {
          const problem = describeInvalid(message);
          if (!guardOf(c.to)(message)) throw new Error(`refused: ${problem}`);
          if (guardOf(c.to === 'primary' ? 'worker' : 'primary')(message)) throw new Error('accepted by the other side');
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    });

    test(`${name}: a field dropped, of the wrong type, out of bounds, or one added is refused`, () => {
      fc.assert(
        fc.property(built, fc.gen(), (valid, gen) => {
          for (const { what, message } of malformed(valid, c.bounds, gen)) {
            if (isWorkerMessage(message) || isPrimaryMessage(message)) throw new Error(`accepted with ${what}`);
            if (describeInvalid(message).includes('valid, but')) throw new Error(`described as valid with ${what}`);
          }
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    });
  }
});
