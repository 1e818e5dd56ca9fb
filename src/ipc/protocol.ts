/**
 * Every message between the primary and its workers: a discriminated union on
 * `type` (namespaced `flotilla:*`), versioned by `v`, checked by guards that
 * never throw. A heartbeat's answer repeats its `seq`.
 * Node's own cluster messages and other libraries' (`prom-client:*`) are not
 * flotilla messages: `isFlotillaMessage` tells them apart.
 */

/**
 * Version of this protocol; a message with another `v` is invalid.
 * 2: workers push metric snapshots (`flotilla:metrics`) instead of answering
 * requests; heartbeats (`flotilla:ping`/`flotilla:pong`); `flotilla:boot-failed`.
 * 3: the primary hands connections over itself (`flotilla:connection`, `flotilla:handoff-ack`,
 * `flotilla:handoff-end`) instead of node:cluster's round robin.
 * 4: topics: `flotilla:publish` (a worker's or the service thread's `app.publish`) and
 * `flotilla:deliver` (the primary hands it to every worker); rate limits counted by the primary
 * (`flotilla:rate-limit-hits`, `flotilla:rate-limit-counts`).
 * 5: sessions kept by the primary (`flotilla:session`, `flotilla:session-result`).
 * 6: the TLS certificate pair the primary read, for the workers' new handshakes (`flotilla:certificates`).
 * 7: the worker forked before the config was read gets its start-up data in `flotilla:start`.
 */
export const PROTOCOL_VERSION = 7;
/** Longest host and fatal or boot-failure `message` accepted. */
export const MAX_HOST_LENGTH = 255;
export const MAX_MESSAGE_LENGTH = 4096;
/**
 * Most bytes a connection's `head` carries (what the primary read while the connection waited): the
 * primary stops reading past 16 KiB, plus at most one read of up to 64 KiB in flight.
 */
export const MAX_HEAD_BYTES = 131_072;
/** Longest PEM text of a certificate file (a chain, a CA bundle) or a key file in `flotilla:certificates`. */
export const MAX_PEM_CHARS = 1_048_576;
/** Most metric families in one metrics snapshot. */
export const MAX_METRICS = 10_000;
/** The longest key of a rate limit's counter (the limiter hashes longer client keys). */
export const MAX_RATE_KEY_LENGTH = 2048;
/** The largest id of a worker's numbered messages (rate-limit hits, session operations) before it starts again from 1. */
export const MAX_MESSAGE_ID = Number.MAX_SAFE_INTEGER;
/** Most hits (and counts) in one rate-limit message. */
export const MAX_RATE_BATCH = 1024;
/** Longest session id, and longest session data (the largest `sessions.maxBytes`). */
export const MAX_SESSION_ID_LENGTH = 128;
export const MAX_SESSION_CHARS = 1_048_576;
/** Most in-flight routes a pong or a fatal message names, and the longest route template kept. */
export const MAX_ROUTES = 32;
export const MAX_ROUTE_LENGTH = 1024;
/** Longest start-up data of a worker (`flotilla:start`: the config as JSON, settings included). */
export const MAX_START_CHARS = 16_777_216;
/** Longest topic (what `app.publish` accepts). */
export const MAX_TOPIC_LENGTH = 256;
/** Longest published `data`: the largest `websockets.maxMessageBytes` (64 MiB), in base64 when binary. */
export const MAX_PUBLISH_CHARS = Math.ceil(67_108_864 / 3) * 4;

import { isRecord } from '../utils/is-record.ts';
import { amount, batchOf, boolean, type Field, type Fields, oneOf, quote, record, type Shape, shapeProblem, string } from './fields.ts';
import { isMetricFamily, type MetricFamily } from './metric-family.ts';

export type { MetricFamily, NonFiniteValue } from './metric-family.ts';

type V = typeof PROTOCOL_VERSION;

/** Who sends a message: a worker (or the service thread) to the primary, or the primary to them. */
type Direction = 'to-primary' | 'to-worker';

/** What every message has: the protocol's version and its type. */
export interface Envelope<T extends string> {
  v: V;
  type: T;
}
/** A message of type `T` whose fields `F` check (besides `v` and `type`). */
export type MessageOf<T extends string, F extends Fields> = Envelope<T> & Shape<F>;

/** One message, declared once: its type name, its direction, the checks of its fields and its constructor. */
interface Declaration<T extends string, D extends Direction, F extends Fields, A extends unknown[]> {
  type: T;
  direction: D;
  fields: F;
  make: (...args: A) => MessageOf<T, F>;
}

/**
 * Declares a message: the guards check its `fields` (in this order, for the first problem found), its
 * type derives from them, and `make` builds it (a constructor returns what its guard accepts).
 */
function declare<T extends string, D extends Direction, F extends Fields, A extends unknown[]>(
  type: T,
  direction: D,
  fields: F,
  make: (...args: A) => NoInfer<MessageOf<T, F>>,
): Declaration<T, D, F, A> {
  return { type, direction, fields, make };
}

const pid: Field<number> = (x) =>
  Number.isSafeInteger(x) && (x as number) > 0 && (x as number) <= 2 ** 31 ? undefined : 'must be a positive integer';
const port: Field<number> = (x) =>
  Number.isInteger(x) && (x as number) >= 1 && (x as number) <= 65535 ? undefined : 'must be a port (1-65535)';
const deadline: Field<number> = (x) =>
  typeof x === 'number' && Number.isFinite(x) && x >= 0 ? undefined : 'must be a finite time in epoch ms';
const metrics: Field<MetricFamily[]> = (x) => {
  if (!Array.isArray(x) || x.length > MAX_METRICS) return `must be an array of at most ${MAX_METRICS} metric families`;
  const bad = x.findIndex((m) => !isMetricFamily(m));
  return bad === -1 ? undefined : `[${bad}] must be a metric family as toMetricFamilies() gives it`;
};
const seq: Field<number> = (x) => (Number.isSafeInteger(x) && (x as number) >= 0 ? undefined : 'must be a non-negative integer');
const messageId: Field<number> = (x) =>
  Number.isSafeInteger(x) && (x as number) >= 1 && (x as number) <= MAX_MESSAGE_ID ? undefined : 'must be a positive integer';
const windowMs: Field<number> = (x) => (Number.isSafeInteger(x) && (x as number) >= 1 ? undefined : 'must be a positive integer of ms');
const message = string(0, MAX_MESSAGE_LENGTH);
const topic = string(1, MAX_TOPIC_LENGTH);
const published = string(0, MAX_PUBLISH_CHARS);
const sessionData = string(0, MAX_SESSION_CHARS);
const route = string(0, MAX_ROUTE_LENGTH);
const inFlight: Field<string[]> = (x) => {
  if (!Array.isArray(x) || x.length > MAX_ROUTES) return `must be an array of at most ${MAX_ROUTES} routes`;
  const bad = x.findIndex((r) => route(r) !== undefined);
  return bad === -1 ? undefined : `[${bad}] ${route(x[bad])}`;
};

/**
 * The route templates (never raw URLs) of the requests a worker was serving:
 * those in flight and the last one that ended (`unmatched` for a request no
 * route matched; `last` empty before any ended). The primary names the route
 * of a request that keeps killing workers with them.
 */
export type WorkerRoutes = Shape<typeof ROUTES>;
const ROUTES = { inFlight, last: route };
const routes = record(ROUTES);

/**
 * One request of a rate limit to count: for `key`, in its fixed window of `windowMs`; with `undo`,
 * one taken back from the window while it runs (a request its limit's `countIf` does not count).
 */
export type RateLimitHit = Shape<typeof HIT>;
const HIT = { id: messageId, key: string(1, MAX_RATE_KEY_LENGTH), windowMs, undo: boolean };

/** The count of one hit: the window's count with it and the ms until it ends, or `ok: false` (both 0) when the store failed. */
export type RateLimitCount = Shape<typeof COUNT>;
const COUNT = { id: messageId, ok: boolean, count: amount, resetMs: amount };

/** The vital signs a pong carries, as `src/process/vitals.ts` samples them. */
const VITALS = {
  /** Resident set size, bytes. */
  rss: amount,
  /** Requests received since the worker started. */
  requests: amount,
  /** Event-loop utilization since the previous pong, 0..1. */
  elu: amount,
  /** Event-loop delay since the previous pong, milliseconds. */
  delayP50Ms: amount,
  delayP99Ms: amount,
  delayMaxMs: amount,
};
type Vitals = Shape<typeof VITALS>;

/** No request served yet. */
const NO_ROUTES: WorkerRoutes = { inFlight: [], last: '' };

/**
 * Every message, declared once. Its name is its constructor's in {@link msg}; its type is exported
 * below under the same name (`pong` → `PongMessage`); `direction` puts it in {@link WorkerMessage}
 * (`to-primary`) or {@link PrimaryMessage} (`to-worker`).
 */
const MESSAGES = {
  /** Worker → primary: the worker's App is listening (a worker counts as up only then). */
  listening: declare(
    'flotilla:listening',
    'to-primary',
    { pid, address: record({ host: string(1, MAX_HOST_LENGTH), port }) },
    (pid: number, address: { host: string; port: number }) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:listening',
      pid,
      address: { host: address.host, port: address.port },
    }),
  ),
  /** Worker → primary: the shutdown sequence is done; `ok` is false when a hook failed or the deadline passed. */
  shutdownComplete: declare('flotilla:shutdown-complete', 'to-primary', { pid, ok: boolean }, (pid: number, ok: boolean) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:shutdown-complete',
    pid,
    ok,
  })),
  /**
   * Worker → primary: a snapshot of the worker's registry, pushed every
   * `cluster.metricsIntervalMs`; `final` on the last one, sent before
   * `flotilla:shutdown-complete`.
   */
  metrics: declare('flotilla:metrics', 'to-primary', { final: boolean, metrics }, (metrics: MetricFamily[], final: boolean = false) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:metrics',
    final,
    metrics,
  })),
  /**
   * Worker → primary: the answer to a heartbeat, with the worker's vital signs since
   * its previous answer (the primary recycles on them and exports them as
   * metrics). `routes`: those being served as the worker answered (named if it then dies without a
   * word: SIGKILL, a segfault).
   */
  pong: declare(
    'flotilla:pong',
    'to-primary',
    { seq, ...VITALS, routes },
    (seq: number, vitals: Vitals, routes: WorkerRoutes = NO_ROUTES) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:pong',
      seq,
      rss: vitals.rss,
      requests: vitals.requests,
      elu: vitals.elu,
      delayP50Ms: vitals.delayP50Ms,
      delayP99Ms: vitals.delayP99Ms,
      delayMaxMs: vitals.delayMaxMs,
      routes: boundRoutes(routes),
    }),
  ),
  /**
   * Worker → primary: about to exit because of an uncaught exception (or an unhandled rejection);
   * `routes`: those being served as it died.
   */
  fatal: declare(
    'flotilla:fatal',
    'to-primary',
    { pid, message, routes },
    (pid: number, message: string, routes: WorkerRoutes = NO_ROUTES) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:fatal',
      pid,
      message: truncate(message),
      routes: boundRoutes(routes),
    }),
  ),
  /**
   * Worker → primary: the worker could not start, for a reason a restart will
   * not fix: the service module threw at import or in its setup (`service`), the
   * address is taken (`address-in-use`), or the service refused the config's
   * `settings` (`config`: the message lists the problems, located in the file).
   * `message` is one human line.
   */
  bootFailed: declare(
    'flotilla:boot-failed',
    'to-primary',
    { pid, kind: oneOf('service', 'address-in-use', 'config'), message },
    (pid: number, kind: 'service' | 'address-in-use' | 'config', message: string) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:boot-failed',
      pid,
      kind,
      message: truncate(message),
    }),
  ),
  /**
   * Worker → primary: a `flotilla:connection` was taken (`accepted`), or refused because the worker
   * no longer serves (it answered 503 itself). The primary hands a worker a new connection only while
   * it has acknowledged the previous ones: a stuck or saturated worker stops receiving them.
   */
  handoffAck: declare('flotilla:handoff-ack', 'to-primary', { accepted: boolean }, (accepted: boolean) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:handoff-ack',
    accepted,
  })),
  /**
   * Service thread → primary: the service registered no scheduler and no shutdown hook for the primary,
   * so its thread has nothing to do and ends (its isolate's memory is returned); not a failure.
   */
  serviceIdle: declare('flotilla:service-idle', 'to-primary', {}, () => ({ v: PROTOCOL_VERSION, type: 'flotilla:service-idle' })),
  /**
   * Service thread → primary: the service's setup ran and its `beforeServe` hooks are done (at once when
   * it has none); the primary lets the workers that await it serve (`flotilla:serve`).
   */
  serviceReady: declare('flotilla:service-ready', 'to-primary', {}, () => ({ v: PROTOCOL_VERSION, type: 'flotilla:service-ready' })),
  /**
   * Worker → primary: its setup registered `beforeServe` hooks, so it listens only once the primary's
   * ran (`flotilla:serve`); meanwhile its start-up timeout is paused.
   */
  awaitServe: declare('flotilla:await-serve', 'to-primary', {}, () => ({ v: PROTOCOL_VERSION, type: 'flotilla:await-serve' })),
  /**
   * Worker → primary, once: the worker received its first request. Sent as the
   * request arrives, before its handler runs, so that the primary knows it even
   * when the request kills the worker at once: a worker that received requests
   * and died is replaced but never counted towards a crash loop.
   */
  firstRequest: declare('flotilla:first-request', 'to-primary', { pid }, (pid: number) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:first-request',
    pid,
  })),
  /**
   * Worker or service thread → primary: `app.publish(topic, data)`; the primary hands it to every worker
   * (the publisher included) and, with `coordination.url`, to the other replicas. `binary`: `data` is
   * base64 of bytes, sent as a binary message; otherwise text.
   */
  publish: declare(
    'flotilla:publish',
    'to-primary',
    { topic, data: published, binary: boolean },
    (topic: string, data: string, binary: boolean) => ({ v: PROTOCOL_VERSION, type: 'flotilla:publish', topic, data, binary }),
  ),
  /**
   * Worker → primary: requests of rate limits to count (ARCHITECTURE.md, "Rate limits"): those a worker
   * served in one turn of its event loop, at most `MAX_RATE_BATCH`. The primary answers them in one
   * `flotilla:rate-limit-counts`, each by its `id`.
   */
  rateLimitHits: declare('flotilla:rate-limit-hits', 'to-primary', { hits: batchOf(MAX_RATE_BATCH, HIT) }, (hits: RateLimitHit[]) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:rate-limit-hits',
    hits,
  })),
  /**
   * Worker → primary: one operation on the session `sid` (ARCHITECTURE.md, "Sessions"): `get` it,
   * `set` it to `data` for `ttlMs`, or `delete` it (`data` empty and `ttlMs` 0 unless `set`). The
   * primary answers with a `flotilla:session-result` of the same `id`.
   */
  session: declare(
    'flotilla:session',
    'to-primary',
    { id: messageId, op: oneOf('get', 'set', 'delete'), sid: string(1, MAX_SESSION_ID_LENGTH), data: sessionData, ttlMs: amount },
    (id: number, op: 'get' | 'set' | 'delete', sid: string, data: string = '', ttlMs: number = 0) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:session',
      id,
      op,
      sid,
      data,
      ttlMs,
    }),
  ),
  /**
   * Primary → worker: shut down; the budget ends at `deadline` (epoch ms). `retire`: only this worker
   * leaves (its replacement already serves, or the cluster shrinks): it stays ready on `/health` while
   * it drains, and skips the drain delay, since the cluster as a whole is not going away.
   */
  shutdown: declare('flotilla:shutdown', 'to-worker', { deadline, retire: boolean }, (deadline: number, retire: boolean = false) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:shutdown',
    deadline,
    retire,
  })),
  /** Primary → worker: a heartbeat; the worker answers `flotilla:pong` with the same `seq`. */
  ping: declare('flotilla:ping', 'to-worker', { seq }, (seq: number) => ({ v: PROTOCOL_VERSION, type: 'flotilla:ping', seq })),
  /**
   * Primary → worker, with a socket as the message's handle: a connection the primary accepted, for the
   * worker to serve. `head`: the bytes the primary read from it while it waited for a worker (base64,
   * empty when it read none), which come before anything the worker reads from the socket.
   */
  connection: declare('flotilla:connection', 'to-worker', { head: string(0, Math.ceil(MAX_HEAD_BYTES / 3) * 4) }, (head: string) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:connection',
    head,
  })),
  /** Primary → worker: no connection follows (the primary closed its listener, or this worker retires). */
  handoffEnd: declare('flotilla:handoff-end', 'to-worker', {}, () => ({ v: PROTOCOL_VERSION, type: 'flotilla:handoff-end' })),
  /**
   * Primary → worker: the TLS certificate pair (PEM) the primary read from `tls.certFile`/`keyFile`
   * (`ca`: `tls.caFile`'s, empty without one) and checked, after they changed or on SIGHUP; the
   * worker's new handshakes use it (src/primary/tls-rotation.ts).
   */
  certificates: declare(
    'flotilla:certificates',
    'to-worker',
    { cert: string(1, MAX_PEM_CHARS), key: string(1, MAX_PEM_CHARS), ca: string(0, MAX_PEM_CHARS) },
    (pair: { cert: string; key: string; ca?: string | undefined }) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:certificates',
      cert: pair.cert,
      key: pair.key,
      ca: pair.ca ?? '',
    }),
  ),
  /**
   * Primary → worker: the start-up data (`WorkerStart` as `encodeWorkerStart` writes it) of the worker
   * forked before the config was read (src/primary/early-worker.ts); any other worker has it in its
   * environment from its fork.
   */
  start: declare('flotilla:start', 'to-worker', { start: string(2, MAX_START_CHARS) }, (start: string) => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:start',
    start,
  })),
  /** Primary → worker: the service's `beforeServe` hooks ran in the primary; listen. */
  serve: declare('flotilla:serve', 'to-worker', {}, () => ({ v: PROTOCOL_VERSION, type: 'flotilla:serve' })),
  /** Primary → worker: a published message, for the worker's sockets subscribed to `topic` (fields as in `flotilla:publish`). */
  deliver: declare(
    'flotilla:deliver',
    'to-worker',
    { topic, data: published, binary: boolean },
    (topic: string, data: string, binary: boolean) => ({ v: PROTOCOL_VERSION, type: 'flotilla:deliver', topic, data, binary }),
  ),
  /** Primary → worker: the answers to one `flotilla:rate-limit-hits`, in its order. */
  rateLimitCounts: declare(
    'flotilla:rate-limit-counts',
    'to-worker',
    { counts: batchOf(MAX_RATE_BATCH, COUNT) },
    (counts: RateLimitCount[]) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:rate-limit-counts',
      counts,
    }),
  ),
  /**
   * Primary → worker: the outcome of one `flotilla:session`: `ok` false when the store failed; for a
   * `get`, `found` with the session's `data` and `ttlLeftMs` (else `found` false, `data` empty).
   */
  sessionResult: declare(
    'flotilla:session-result',
    'to-worker',
    { id: messageId, ok: boolean, found: boolean, data: sessionData, ttlLeftMs: amount },
    (id: number, ok: boolean, found: boolean = false, data: string = '', ttlLeftMs: number = 0) => ({
      v: PROTOCOL_VERSION,
      type: 'flotilla:session-result',
      id,
      ok,
      found,
      data,
      ttlLeftMs,
    }),
  ),
};

type Messages = typeof MESSAGES;
/** The message a declaration declares. */
type Declared<X> = X extends Declaration<infer T, Direction, infer F, infer _A> ? MessageOf<T, F> : never;
/** The messages declared with direction `D`. */
type Going<D extends Direction> = {
  [K in keyof Messages]: Messages[K]['direction'] extends D ? Declared<Messages[K]> : never;
}[keyof Messages];

export type ListeningMessage = Declared<Messages['listening']>;
export type ShutdownCompleteMessage = Declared<Messages['shutdownComplete']>;
export type MetricsMessage = Declared<Messages['metrics']>;
export type PongMessage = Declared<Messages['pong']>;
export type FatalMessage = Declared<Messages['fatal']>;
export type BootFailedMessage = Declared<Messages['bootFailed']>;
export type HandoffAckMessage = Declared<Messages['handoffAck']>;
export type ServiceIdleMessage = Declared<Messages['serviceIdle']>;
export type ServiceReadyMessage = Declared<Messages['serviceReady']>;
export type AwaitServeMessage = Declared<Messages['awaitServe']>;
export type FirstRequestMessage = Declared<Messages['firstRequest']>;
export type PublishMessage = Declared<Messages['publish']>;
export type RateLimitHitsMessage = Declared<Messages['rateLimitHits']>;
export type SessionMessage = Declared<Messages['session']>;
export type ShutdownMessage = Declared<Messages['shutdown']>;
export type PingMessage = Declared<Messages['ping']>;
export type ConnectionMessage = Declared<Messages['connection']>;
export type HandoffEndMessage = Declared<Messages['handoffEnd']>;
export type CertificatesMessage = Declared<Messages['certificates']>;
export type ServeMessage = Declared<Messages['serve']>;
export type StartMessage = Declared<Messages['start']>;
export type DeliverMessage = Declared<Messages['deliver']>;
export type RateLimitCountsMessage = Declared<Messages['rateLimitCounts']>;
export type SessionResultMessage = Declared<Messages['sessionResult']>;

/** Every message a worker (or the service thread) sends the primary. */
export type WorkerMessage = Going<'to-primary'>;
/** Every message the primary sends a worker (or the service thread). */
export type PrimaryMessage = Going<'to-worker'>;
export type FlotillaMessage = WorkerMessage | PrimaryMessage;

/**
 * Constructors: each returns a message its guard accepts (a fatal message is
 * truncated to `MAX_MESSAGE_LENGTH`).
 *
 * @example
 * process.send?.(msg.listening(process.pid, { host: '0.0.0.0', port: 3000 }));
 * worker.send(msg.shutdown(Date.now() + 10_000));
 */
export const msg = Object.fromEntries(Object.entries(MESSAGES).map(([name, d]) => [name, d.make])) as {
  readonly [K in keyof Messages]: Messages[K]['make'];
};

/** The checks of each message type's fields, by direction, and of all. */
const TO_PRIMARY: Record<string, Fields> = {};
const TO_WORKER: Record<string, Fields> = {};
for (const d of Object.values(MESSAGES)) (d.direction === 'to-primary' ? TO_PRIMARY : TO_WORKER)[d.type] = d.fields;
const ALL: Record<string, Fields> = { ...TO_PRIMARY, ...TO_WORKER };

function truncate(message: string, max = MAX_MESSAGE_LENGTH): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}

/** At most `MAX_ROUTES` routes of at most `MAX_ROUTE_LENGTH` characters, as the guard accepts them. */
function boundRoutes(routes: WorkerRoutes): WorkerRoutes {
  return {
    inFlight: routes.inFlight.slice(0, MAX_ROUTES).map((route) => truncate(route, MAX_ROUTE_LENGTH)),
    last: truncate(routes.last, MAX_ROUTE_LENGTH),
  };
}

/**
 * True for anything claiming to be a flotilla message (a string `type`
 * starting with `flotilla:`), valid or not; Node's and other libraries'
 * messages are false. Log invalid flotilla messages, ignore the others.
 *
 * @example
 * if (!isWorkerMessage(m)) { if (isFlotillaMessage(m)) log.warn(describeInvalid(m)); return; }
 */
export function isFlotillaMessage(x: unknown): boolean {
  return safely(() => isRecord(x) && typeof x['type'] === 'string' && x['type'].startsWith('flotilla:'), false);
}

/**
 * A valid message from a worker to the primary.
 *
 * @example
 * worker.on('message', (m) => { if (isWorkerMessage(m) && m.type === 'flotilla:listening') up(worker, m.address) });
 */
export function isWorkerMessage(x: unknown): x is WorkerMessage {
  return safely(() => problemOf(x, TO_PRIMARY) === undefined, false);
}

/**
 * A valid message from the primary to a worker.
 *
 * @example
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:shutdown') app.close() });
 */
export function isPrimaryMessage(x: unknown): x is PrimaryMessage {
  return safely(() => problemOf(x, TO_WORKER) === undefined, false);
}

/**
 * A short, safe description of why a value is not a flotilla message, for
 * logging dropped messages. Never throws, never echoes field values. A valid
 * message is described with its direction: the side that drops it received
 * one meant for the other side.
 *
 * @example
 * describeInvalid({ v: 1, type: 'flotilla:shutdown', deadline: 1 }); // 'flotilla:shutdown: v must be 2'
 * describeInvalid(msg.shutdown(0)); // 'flotilla:shutdown: valid, but it goes from the primary to a worker'
 */
export function describeInvalid(x: unknown): string {
  return safely(() => {
    const problem = problemOf(x, ALL);
    const type = isRecord(x) && typeof x['type'] === 'string' ? x['type'] : undefined;
    const prefix = type !== undefined && Object.hasOwn(ALL, type) ? `${type}: ` : '';
    if (problem !== undefined) return `${prefix}${problem}`;
    return `${prefix}valid, but it goes from ${isWorkerMessage(x) ? 'a worker to the primary' : 'the primary to a worker'}`;
  }, 'unreadable value');
}

function problemOf(x: unknown, types: Record<string, Fields>): string | undefined {
  if (!isRecord(x)) return `not a message object (${x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x})`;
  const type = x['type'];
  if (typeof type !== 'string') return 'type must be a string';
  if (!Object.hasOwn(types, type)) return `unknown type ${quote(type)}`;
  if (x['v'] !== PROTOCOL_VERSION) return `v must be ${PROTOCOL_VERSION}`;
  return shapeProblem(x, { v: () => undefined, type: () => undefined, ...types[type] });
}

function safely<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}
