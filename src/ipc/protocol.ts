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
 */
export const PROTOCOL_VERSION = 6;
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
/** Longest topic (what `app.publish` accepts). */
export const MAX_TOPIC_LENGTH = 256;
/** Longest published `data`: the largest `websockets.maxMessageBytes` (64 MiB), in base64 when binary. */
export const MAX_PUBLISH_CHARS = Math.ceil(67_108_864 / 3) * 4;

import { isRecord } from '../utils/is-record.ts';
import { isMetricFamily, type MetricFamily } from './metric-family.ts';

export type { MetricFamily, NonFiniteValue } from './metric-family.ts';

type V = typeof PROTOCOL_VERSION;

/** Worker → primary: the worker's App is listening (a worker counts as up only then). */
export interface ListeningMessage {
  v: V;
  type: 'flotilla:listening';
  pid: number;
  address: { host: string; port: number };
}
/** Worker → primary: the shutdown sequence is done; `ok` is false when a hook failed or the deadline passed. */
export interface ShutdownCompleteMessage {
  v: V;
  type: 'flotilla:shutdown-complete';
  pid: number;
  ok: boolean;
}
/**
 * Worker → primary: a snapshot of the worker's registry, pushed every
 * `cluster.metricsIntervalMs`; `final` on the last one, sent before
 * `flotilla:shutdown-complete`.
 */
export interface MetricsMessage {
  v: V;
  type: 'flotilla:metrics';
  final: boolean;
  metrics: MetricFamily[];
}
/**
 * The route templates (never raw URLs) of the requests a worker was serving:
 * those in flight and the last one that ended (`unmatched` for a request no
 * route matched; `last` empty before any ended). The primary names the route
 * of a request that keeps killing workers with them.
 */
export interface WorkerRoutes {
  inFlight: string[];
  last: string;
}
/**
 * Worker → primary, once: the worker received its first request. Sent as the
 * request arrives, before its handler runs, so that the primary knows it even
 * when the request kills the worker at once: a worker that received requests
 * and died is replaced but never counted towards a crash loop.
 */
export interface FirstRequestMessage {
  v: V;
  type: 'flotilla:first-request';
  pid: number;
}
/**
 * Worker → primary: the answer to a heartbeat, with the worker's vitals since
 * its previous answer (the primary recycles on them and exports them as
 * metrics).
 */
export interface PongMessage {
  v: V;
  type: 'flotilla:pong';
  seq: number;
  /** Resident set size, bytes. */
  rss: number;
  /** Requests received since the worker started. */
  requests: number;
  /** Event-loop utilization since the previous pong, 0..1. */
  elu: number;
  /** Event-loop delay since the previous pong, milliseconds. */
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** The routes being served as the worker answered (named if it then dies without a word: SIGKILL, a segfault). */
  routes: WorkerRoutes;
}
/**
 * Worker → primary: the worker could not start, for a reason a restart will
 * not fix: the service module threw at import or in its setup (`service`), or
 * the address is taken (`address-in-use`). `message` is one human line.
 */
export interface BootFailedMessage {
  v: V;
  type: 'flotilla:boot-failed';
  pid: number;
  /** `config`: the service refused the config's `settings` (the message lists the problems, located in the file). */
  kind: 'service' | 'address-in-use' | 'config';
  message: string;
}
/** Worker → primary: about to exit because of an uncaught exception (or an unhandled rejection). */
export interface FatalMessage {
  v: V;
  type: 'flotilla:fatal';
  pid: number;
  message: string;
  /** The routes being served as it died. */
  routes: WorkerRoutes;
}
/**
 * Primary → worker: shut down; the budget ends at `deadline` (epoch ms). `retire`: only this worker
 * leaves (its replacement already serves, or the cluster shrinks): it stays ready on `/health` while
 * it drains, and skips the drain delay, since the cluster as a whole is not going away.
 */
export interface ShutdownMessage {
  v: V;
  type: 'flotilla:shutdown';
  deadline: number;
  retire: boolean;
}
/** Primary → worker: a heartbeat; the worker answers `flotilla:pong` with the same `seq`. */
export interface PingMessage {
  v: V;
  type: 'flotilla:ping';
  seq: number;
}

/**
 * Primary → worker, with a socket as the message's handle: a connection the primary accepted, for the
 * worker to serve. `head`: the bytes the primary read from it while it waited for a worker (base64,
 * empty when it read none), which come before anything the worker reads from the socket.
 */
export interface ConnectionMessage {
  v: V;
  type: 'flotilla:connection';
  head: string;
}
/**
 * Worker → primary: a `flotilla:connection` was taken (`accepted`), or refused because the worker
 * no longer serves (it answered 503 itself). The primary hands a worker a new connection only while
 * it has acknowledged the previous ones: a stuck or saturated worker stops receiving them.
 */
export interface HandoffAckMessage {
  v: V;
  type: 'flotilla:handoff-ack';
  accepted: boolean;
}
/**
 * Primary → worker: the TLS certificate pair (PEM) the primary read from `tls.certFile`/`keyFile`
 * (`ca`: `tls.caFile`'s, empty without one) and checked, after they changed or on SIGHUP; the
 * worker's new handshakes use it (src/primary/tls-rotation.ts).
 */
export interface CertificatesMessage {
  v: V;
  type: 'flotilla:certificates';
  cert: string;
  key: string;
  ca: string;
}
/** Primary → worker: no connection follows (the primary closed its listener, or this worker retires). */
export interface HandoffEndMessage {
  v: V;
  type: 'flotilla:handoff-end';
}

/**
 * Worker or service thread → primary: `app.publish(topic, data)`; the primary hands it to every worker
 * (the publisher included) and, with `coordination.url`, to the other replicas. `binary`: `data` is
 * base64 of bytes, sent as a binary message; otherwise text.
 */
export interface PublishMessage {
  v: V;
  type: 'flotilla:publish';
  topic: string;
  data: string;
  binary: boolean;
}
/** Primary → worker: a published message, for the worker's sockets subscribed to `topic` (fields as in {@link PublishMessage}). */
export interface DeliverMessage {
  v: V;
  type: 'flotilla:deliver';
  topic: string;
  data: string;
  binary: boolean;
}

/**
 * Service thread → primary: the service registered no scheduler and no shutdown hook for the primary,
 * so its thread has nothing to do and ends (its isolate's memory is returned); not a failure.
 */
export interface ServiceIdleMessage {
  v: V;
  type: 'flotilla:service-idle';
}

/**
 * Service thread → primary: the service's setup ran and its `beforeServe` hooks are done (at once when
 * it has none); the primary lets the workers that await it serve (`flotilla:serve`).
 */
export interface ServiceReadyMessage {
  v: V;
  type: 'flotilla:service-ready';
}
/**
 * One request of a rate limit to count: for `key`, in its fixed window of `windowMs`; with `undo`,
 * one taken back from the window while it runs (a request its limit's `countIf` does not count).
 */
export interface RateLimitHit {
  id: number;
  key: string;
  windowMs: number;
  undo: boolean;
}
/**
 * Worker → primary: requests of rate limits to count (ARCHITECTURE.md, "Rate limits"): those a worker
 * served in one turn of its event loop, at most `MAX_RATE_BATCH`. The primary answers them in one
 * `flotilla:rate-limit-counts`, each by its `id`.
 */
export interface RateLimitHitsMessage {
  v: V;
  type: 'flotilla:rate-limit-hits';
  hits: RateLimitHit[];
}
/** The count of one hit: the window's count with it and the ms until it ends, or `ok: false` (both 0) when the store failed. */
export interface RateLimitCount {
  id: number;
  ok: boolean;
  count: number;
  resetMs: number;
}
/** Primary → worker: the answers to one `flotilla:rate-limit-hits`, in its order. */
export interface RateLimitCountsMessage {
  v: V;
  type: 'flotilla:rate-limit-counts';
  counts: RateLimitCount[];
}

/**
 * Worker → primary: one operation on the session `sid` (ARCHITECTURE.md, "Sessions"): `get` it,
 * `set` it to `data` for `ttlMs`, or `delete` it (`data` empty and `ttlMs` 0 unless `set`). The
 * primary answers with a `flotilla:session-result` of the same `id`.
 */
export interface SessionMessage {
  v: V;
  type: 'flotilla:session';
  id: number;
  op: 'get' | 'set' | 'delete';
  sid: string;
  data: string;
  ttlMs: number;
}
/**
 * Primary → worker: the outcome of one `flotilla:session`: `ok` false when the store failed; for a
 * `get`, `found` with the session's `data` and `ttlLeftMs` (else `found` false, `data` empty).
 */
export interface SessionResultMessage {
  v: V;
  type: 'flotilla:session-result';
  id: number;
  ok: boolean;
  found: boolean;
  data: string;
  ttlLeftMs: number;
}

/**
 * Worker → primary: its setup registered `beforeServe` hooks, so it listens only once the primary's
 * ran (`flotilla:serve`); meanwhile its start-up timeout is paused.
 */
export interface AwaitServeMessage {
  v: V;
  type: 'flotilla:await-serve';
}

/** Primary → worker: the service's `beforeServe` hooks ran in the primary; listen. */
export interface ServeMessage {
  v: V;
  type: 'flotilla:serve';
}

export type WorkerMessage =
  | ListeningMessage
  | ShutdownCompleteMessage
  | MetricsMessage
  | PongMessage
  | FatalMessage
  | BootFailedMessage
  | HandoffAckMessage
  | FirstRequestMessage
  | ServiceIdleMessage
  | ServiceReadyMessage
  | AwaitServeMessage
  | PublishMessage
  | RateLimitHitsMessage
  | SessionMessage;
export type PrimaryMessage =
  | ShutdownMessage
  | PingMessage
  | ConnectionMessage
  | HandoffEndMessage
  | CertificatesMessage
  | DeliverMessage
  | ServeMessage
  | RateLimitCountsMessage
  | SessionResultMessage;
export type FlotillaMessage = WorkerMessage | PrimaryMessage;

/**
 * Constructors: each returns a message its guard accepts (a fatal message is
 * truncated to `MAX_MESSAGE_LENGTH`).
 *
 * @example
 * process.send?.(msg.listening(process.pid, { host: '0.0.0.0', port: 3000 }));
 * worker.send(msg.shutdown(Date.now() + 10_000));
 */
export const msg = {
  listening: (pid: number, address: { host: string; port: number }): ListeningMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:listening',
    pid,
    address: { host: address.host, port: address.port },
  }),
  shutdownComplete: (pid: number, ok: boolean): ShutdownCompleteMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:shutdown-complete',
    pid,
    ok,
  }),
  metrics: (metrics: MetricFamily[], final = false): MetricsMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:metrics',
    final,
    metrics,
  }),
  pong: (seq: number, vitals: Omit<PongMessage, 'v' | 'type' | 'seq' | 'routes'>, routes: WorkerRoutes = NO_ROUTES): PongMessage => ({
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
  bootFailed: (pid: number, kind: BootFailedMessage['kind'], message: string): BootFailedMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:boot-failed',
    pid,
    kind,
    message: truncate(message),
  }),
  fatal: (pid: number, message: string, routes: WorkerRoutes = NO_ROUTES): FatalMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:fatal',
    pid,
    message: truncate(message),
    routes: boundRoutes(routes),
  }),
  firstRequest: (pid: number): FirstRequestMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:first-request', pid }),
  shutdown: (deadline: number, retire = false): ShutdownMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:shutdown', deadline, retire }),
  ping: (seq: number): PingMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:ping', seq }),
  connection: (head: string): ConnectionMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:connection', head }),
  handoffAck: (accepted: boolean): HandoffAckMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:handoff-ack', accepted }),
  handoffEnd: (): HandoffEndMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:handoff-end' }),
  certificates: (pair: { cert: string; key: string; ca?: string | undefined }): CertificatesMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:certificates',
    cert: pair.cert,
    key: pair.key,
    ca: pair.ca ?? '',
  }),
  serviceIdle: (): ServiceIdleMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:service-idle' }),
  serviceReady: (): ServiceReadyMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:service-ready' }),
  awaitServe: (): AwaitServeMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:await-serve' }),
  serve: (): ServeMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:serve' }),
  publish: (topic: string, data: string, binary: boolean): PublishMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:publish',
    topic,
    data,
    binary,
  }),
  deliver: (topic: string, data: string, binary: boolean): DeliverMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:deliver',
    topic,
    data,
    binary,
  }),
  rateLimitHits: (hits: RateLimitHit[]): RateLimitHitsMessage => ({ v: PROTOCOL_VERSION, type: 'flotilla:rate-limit-hits', hits }),
  rateLimitCounts: (counts: RateLimitCount[]): RateLimitCountsMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:rate-limit-counts',
    counts,
  }),
  session: (id: number, op: SessionMessage['op'], sid: string, data = '', ttlMs = 0): SessionMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:session',
    id,
    op,
    sid,
    data,
    ttlMs,
  }),
  sessionResult: (id: number, ok: boolean, found = false, data = '', ttlLeftMs = 0): SessionResultMessage => ({
    v: PROTOCOL_VERSION,
    type: 'flotilla:session-result',
    id,
    ok,
    found,
    data,
    ttlLeftMs,
  }),
} as const;

function truncate(message: string, max = MAX_MESSAGE_LENGTH): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}

/** No request served yet. */
const NO_ROUTES: WorkerRoutes = { inFlight: [], last: '' };

/** At most `MAX_ROUTES` routes of at most `MAX_ROUTE_LENGTH` characters, as the guard accepts them. */
function boundRoutes(routes: WorkerRoutes): WorkerRoutes {
  return {
    inFlight: routes.inFlight.slice(0, MAX_ROUTES).map((route) => truncate(route, MAX_ROUTE_LENGTH)),
    last: truncate(routes.last, MAX_ROUTE_LENGTH),
  };
}

type Fields = Record<string, (value: unknown) => string | undefined>;

const string = (min: number, max: number) => (x: unknown) =>
  typeof x === 'string' && x.length >= min && x.length <= max ? undefined : `must be a string of ${min} to ${max} characters`;
const pid = (x: unknown) =>
  Number.isSafeInteger(x) && (x as number) > 0 && (x as number) <= 2 ** 31 ? undefined : 'must be a positive integer';
const boolean = (x: unknown) => (typeof x === 'boolean' ? undefined : 'must be a boolean');
const port = (x: unknown) => (Number.isInteger(x) && (x as number) >= 1 && (x as number) <= 65535 ? undefined : 'must be a port (1-65535)');
const address = (x: unknown) => {
  const problem = isRecord(x) ? shapeProblem(x, { host: string(1, MAX_HOST_LENGTH), port }) : 'must be an object';
  return problem === undefined || !isRecord(x) ? problem : `.${problem}`;
};
const deadline = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? undefined : 'must be a finite time in epoch ms');
const metrics = (x: unknown) => {
  if (!Array.isArray(x) || x.length > MAX_METRICS) return `must be an array of at most ${MAX_METRICS} metric families`;
  const bad = x.findIndex((m) => !isMetricFamily(m));
  return bad === -1 ? undefined : `[${bad}] must be a metric family as toMetricFamilies() gives it`;
};

const seq = (x: unknown) => (Number.isSafeInteger(x) && (x as number) >= 0 ? undefined : 'must be a non-negative integer');
const amount = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? undefined : 'must be a finite number >= 0');
const kind = (x: unknown) =>
  x === 'service' || x === 'address-in-use' || x === 'config' ? undefined : "must be 'service', 'address-in-use' or 'config'";

const messageId = (x: unknown) =>
  Number.isSafeInteger(x) && (x as number) >= 1 && (x as number) <= MAX_MESSAGE_ID ? undefined : 'must be a positive integer';
const windowMs = (x: unknown) => (Number.isSafeInteger(x) && (x as number) >= 1 ? undefined : 'must be a positive integer of ms');
/** A non-empty array of at most `MAX_RATE_BATCH` records, each of `fields`. */
const batchOf = (fields: Fields) => (x: unknown) => {
  if (!Array.isArray(x) || x.length === 0 || x.length > MAX_RATE_BATCH) return `must be an array of 1 to ${MAX_RATE_BATCH} entries`;
  for (let i = 0; i < x.length; i++) {
    const entry: unknown = x[i];
    const problem = isRecord(entry) ? shapeProblem(entry, fields) : 'must be an object';
    if (problem !== undefined) return `[${i}]${isRecord(entry) ? '.' : ' '}${problem}`;
  }
  return undefined;
};
const hits = batchOf({ id: messageId, key: string(1, MAX_RATE_KEY_LENGTH), windowMs, undo: boolean });
const counts = batchOf({ id: messageId, ok: boolean, count: amount, resetMs: amount });
const sessionOp = (x: unknown) => (x === 'get' || x === 'set' || x === 'delete' ? undefined : "must be 'get', 'set' or 'delete'");
const sessionData = string(0, MAX_SESSION_CHARS);

const route = string(0, MAX_ROUTE_LENGTH);
const routes = (x: unknown) => {
  const inFlight = (y: unknown) => {
    if (!Array.isArray(y) || y.length > MAX_ROUTES) return `must be an array of at most ${MAX_ROUTES} routes`;
    const bad = y.findIndex((r) => route(r) !== undefined);
    return bad === -1 ? undefined : `[${bad}] ${route(y[bad])}`;
  };
  const problem = isRecord(x) ? shapeProblem(x, { inFlight, last: route }) : 'must be an object';
  return problem === undefined || !isRecord(x) ? problem : `.${problem}`;
};

const WORKER: Record<WorkerMessage['type'], Fields> = {
  'flotilla:listening': { pid, address },
  'flotilla:shutdown-complete': { pid, ok: boolean },
  'flotilla:metrics': { final: boolean, metrics },
  'flotilla:pong': { seq, rss: amount, requests: amount, elu: amount, delayP50Ms: amount, delayP99Ms: amount, delayMaxMs: amount, routes },
  'flotilla:fatal': { pid, message: string(0, MAX_MESSAGE_LENGTH), routes },
  'flotilla:boot-failed': { pid, kind, message: string(0, MAX_MESSAGE_LENGTH) },
  'flotilla:handoff-ack': { accepted: boolean },
  'flotilla:service-idle': {},
  'flotilla:service-ready': {},
  'flotilla:await-serve': {},
  'flotilla:first-request': { pid },
  'flotilla:publish': { topic: string(1, MAX_TOPIC_LENGTH), data: string(0, MAX_PUBLISH_CHARS), binary: boolean },
  'flotilla:rate-limit-hits': { hits },
  'flotilla:session': { id: messageId, op: sessionOp, sid: string(1, MAX_SESSION_ID_LENGTH), data: sessionData, ttlMs: amount },
};
const PRIMARY: Record<PrimaryMessage['type'], Fields> = {
  'flotilla:shutdown': { deadline, retire: boolean },
  'flotilla:ping': { seq },
  'flotilla:connection': { head: string(0, Math.ceil(MAX_HEAD_BYTES / 3) * 4) },
  'flotilla:handoff-end': {},
  'flotilla:certificates': { cert: string(1, MAX_PEM_CHARS), key: string(1, MAX_PEM_CHARS), ca: string(0, MAX_PEM_CHARS) },
  'flotilla:serve': {},
  'flotilla:deliver': { topic: string(1, MAX_TOPIC_LENGTH), data: string(0, MAX_PUBLISH_CHARS), binary: boolean },
  'flotilla:rate-limit-counts': { counts },
  'flotilla:session-result': { id: messageId, ok: boolean, found: boolean, data: sessionData, ttlLeftMs: amount },
};

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
  return safely(() => problemOf(x, WORKER) === undefined, false);
}

/**
 * A valid message from the primary to a worker.
 *
 * @example
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:shutdown') app.close() });
 */
export function isPrimaryMessage(x: unknown): x is PrimaryMessage {
  return safely(() => problemOf(x, PRIMARY) === undefined, false);
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
    const all = { ...WORKER, ...PRIMARY };
    const problem = problemOf(x, all);
    const type = isRecord(x) && typeof x['type'] === 'string' ? x['type'] : undefined;
    const prefix = type !== undefined && Object.hasOwn(all, type) ? `${type}: ` : '';
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

/** The first field of `x` that is missing, unexpected or wrong, e.g. `address.port must be a port (1-65535)`. */
function shapeProblem(x: Record<string, unknown>, fields: Fields): string | undefined {
  for (const key of Object.keys(x)) if (!Object.hasOwn(fields, key)) return `unexpected field ${quote(key)}`;
  for (const [key, check] of Object.entries(fields)) {
    const problem = Object.hasOwn(x, key) ? check(x[key]) : 'is missing';
    if (problem !== undefined) return /^[.[]/.test(problem) ? `${key}${problem}` : `${key} ${problem}`;
  }
  return undefined;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

function safely<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}
