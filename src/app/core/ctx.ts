import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { createError } from '../../errors/flotilla-error.ts';
import { negotiateLocale, type Translator } from '../../i18n/translator.ts';
import { otel } from '../../utils/otel-api.ts';
import type { CookieSigner } from '../cookies/cookie-signer.ts';
import { Cookies } from '../cookies/cookies.ts';
import { type ClientOrigin, clientOf, type ProxyTrust } from '../headers/trusted-proxy.ts';
import { ADMITTED, BACKLOG, EXPECTED_MS, STARTED } from '../overload/arrival.ts';
import { DEADLINE, LIMIT_MS, SLOT } from '../overload/in-flight.ts';
import { type PageQuery, parsePagination } from '../pagination/page.ts';
import type { RequestSession, Session } from '../sessions/session.ts';
import { loadSession, type SessionHost } from '../sessions/session-host.ts';
import type { SseEvent, SseOptions } from '../streams/sse.ts';
import { isStreamSource, type StreamSource } from '../streams/stream-reply.ts';
import { ClientGoneError } from './client-gone.ts';
import type { RequestContext } from './request-context.ts';

const { ROOT_CONTEXT } = otel;

/**
 * Writes a JSON reply of one route by its response schemas: the body for
 * `value` sent with `status`, or `undefined` when no schema covers that status
 * (the reply is then `JSON.stringify`'d). Throws a {@link ResponseSchemaError}
 * when the value does not fit the schema, before anything is written.
 */
export type ResponseSerializer = (status: number, value: unknown) => string | undefined;

/** What a websocket route's `ctx` does with its socket (`ctx.subscribe`, `ctx.unsubscribe`). */
export interface SocketTopics {
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
}

/** What a request needs from its App; shared by every Ctx of that App. */
export interface CtxScope {
  readonly logger: Logger;
  /** Replaced by `app.setTranslator`. */
  translator: Translator | undefined;
  /** Aborts when the shutdown deadline passes. */
  readonly deadline: AbortSignal;
  /** Signs and verifies cookies under `cookies.secrets`; undefined without secrets. */
  readonly cookieSigner: CookieSigner | undefined;
  /** The proxies `trustProxy` believes; undefined: none, the socket's peer is the client. */
  readonly trustProxy: ProxyTrust | undefined;
  /** The store and settings of `ctx.session()`. */
  readonly sessions: SessionHost;
}

/** The body a handler chose to send; written once, after the middlewares have run. */
export type Reply =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; body: string | Buffer; type: string }
  | { kind: 'stream'; source: StreamSource; type: string }
  | { kind: 'sse'; source: AsyncIterable<SseEvent>; options: SseOptions }
  /** A websocket route's handshake is done: the connection is the socket's, nothing is written. */
  | { kind: 'upgraded' };

/** Ends a request's route work (see {@link expireRequest}); set by the class below. */
let expire: (ctx: Ctx, reason: Error) => void;
/** Whether a request's route work was ended (see {@link isExpired}); set by the class below. */
let expired: (ctx: Ctx) => boolean;
/** Gives a websocket route's ctx its socket's topics (see {@link attachSocket}); set by the class below. */
let attach: (ctx: Ctx, topics: SocketTopics) => void;
/** The session a request loaded, if it asked for one (see {@link sessionOf}); set by the class below. */
let loaded: (ctx: Ctx) => Promise<RequestSession> | undefined;

/**
 * What middlewares leave in `ctx.state` for the handlers, in every route: empty
 * (any key reads as `unknown`) until the service declares its keys by
 * declaration merging. A middleware typed `Middleware<{ user: User }>` adds its
 * keys to the state of the routes that list it (see `Middleware`).
 *
 * @example
 * declare module 'flotilla' {
 *   interface RequestState { tenant: string } // set by an App-wide middleware
 * }
 */
export interface RequestState {
  [key: string]: unknown;
}

/**
 * The per-request object handed to handlers and middlewares. Its type
 * parameters are what the route's schemas declare (`defineRoute` fills them
 * in); without them, params and query are `Record<string, unknown>`, the body
 * `unknown` and the state {@link RequestState}.
 *
 * @example
 * handler: async (ctx) => {
 *   const q = ctx.parsePagination();
 *   ctx.logger.info({ q }, 'listing books');
 *   return repo.findAll(ctx.context(), q);
 * }
 */
export class Ctx<
  Params = Record<string, unknown>,
  Query = Record<string, unknown>,
  Headers = IncomingHttpHeaders,
  Body = unknown,
  State = RequestState,
> {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  readonly method: string;
  /** The request path, without the query string. */
  readonly path: string;
  /** The matched route template (`/books/:id`); empty when no route matched. */
  route = '';
  /** `InFlight`'s place for this request (see in-flight.ts). */
  [SLOT] = -1;
  /** The handler timeout's deadline (see handler-timeouts.ts); 0: none. */
  [DEADLINE] = 0;
  /** The limit that deadline was set from, in milliseconds. */
  [LIMIT_MS] = 0;
  /** How the request arrived (see overload/arrival.ts), written by the pipeline. */
  [STARTED] = 0;
  [ADMITTED] = false;
  [BACKLOG] = 0;
  [EXPECTED_MS] = 0;
  /** The route's parameters (coerced and validated by `schema.params`). */
  params = {} as Params;
  /** The query string (coerced and validated by `schema.querystring`). */
  query = {} as Query;
  /** The parsed (and validated) JSON body; `undefined` when the request has none. */
  body = undefined as Body;
  /** Free space for middlewares to pass data to handlers (e.g. the authenticated user). */
  readonly state = {} as State;
  /** The verified claims of the request's bearer token, set by a `jwtAuth` hook; `undefined` without one (read them typed with `auth.claims(ctx)`). */
  auth: Record<string, unknown> | undefined = undefined;
  /** The OpenTelemetry context of the request, its server span active in it (set by the pipeline). */
  otel: Context = ROOT_CONTEXT;
  /** The trace id of the request's span, when it is recorded (an OpenTelemetry SDK is registered). */
  traceId: string | undefined;

  statusCode = 200;
  reply: Reply = { kind: 'none' };
  /** Writes JSON replies by the matched route's response schemas (set by the pipeline); `undefined`: `JSON.stringify`. */
  serializer: ResponseSerializer | undefined = undefined;

  readonly #scope: CtxScope;
  #logger: Logger | undefined;
  #context: RequestContext | undefined;
  #origin: ClientOrigin | undefined;
  #locale: string | undefined;
  #cookies: Cookies | undefined;
  /** Aborts the request's signal: the client left, or the route work ran out of time. */
  #abort: AbortController | undefined;
  /** Why the route work was ended early (a `TimeoutError`), once it was. */
  #expired: Error | undefined;
  /** A websocket route's socket, once open: what `subscribe` acts on. */
  #topics: SocketTopics | undefined;
  /** The request's session, once asked for. */
  #session: Promise<RequestSession> | undefined;

  static {
    expire = (ctx, reason) => ctx.#expire(reason);
    expired = (ctx) => ctx.#expired !== undefined;
    attach = (ctx, topics) => {
      ctx.#topics = topics;
    };
    loaded = (ctx) => ctx.#session;
  }

  constructor(scope: CtxScope, req: IncomingMessage, res: ServerResponse, requestId: string, path: string) {
    this.#scope = scope;
    this.req = req;
    this.res = res;
    this.requestId = requestId;
    this.method = req.method ?? 'GET';
    this.path = path;
  }

  /**
   * The request's cookies and the response's: `get(name, { signed })`, `set(name, value, options)`,
   * `clear(name)` (see {@link Cookies}). The `Cookie` header is parsed on the first read.
   *
   * @example
   * const user = ctx.cookies.get('session', { signed: true });
   * ctx.cookies.set('session', id, { signed: true, maxAge: 86_400, secure: true });
   */
  get cookies(): Cookies {
    this.#cookies ??= new Cookies(this.req, this.res, this.#scope.cookieSigner, () => this.#expired === undefined);
    return this.#cookies;
  }

  /**
   * The request's session (docs/guides/sessions.md): loaded from the store on the first call (the
   * same object after), by the id its signed cookie carries, or new and empty; saved after the
   * handler when it changed. Rejects with a 503 `SESSION_STORE_UNAVAILABLE` when the store cannot
   * be reached, never with an empty session in its place.
   *
   * @example
   * const session = await ctx.session();
   * const cart = session.get('cart') ?? [];
   * session.set('cart', [...cart, ctx.params.id]);
   */
  session(): Promise<Session> {
    if (this.#session !== undefined) return this.#session;
    if (this.#scope.cookieSigner === undefined) return Promise.reject(createError('FLO_ERR_SESSIONS_NEED_SECRETS', {}));
    this.#session = loadSession(this.#scope.sessions, this);
    return this.#session;
  }

  /**
   * The client's address: the socket's peer, or, when that peer is a proxy `trustProxy` believes,
   * the address its forwarding headers give (`Forwarded`, `X-Forwarded-For`). The default rate-limit
   * key and the request log use it.
   */
  get ip(): string {
    return this.#client().ip;
  }

  /** `http` or `https`, as the client used it (a trusted proxy's `proto`, `X-Forwarded-Proto`). */
  get protocol(): string {
    return this.#client().protocol;
  }

  /** The host the client asked for, with its port if it gave one (a trusted proxy's `host`, `X-Forwarded-Host`; else `Host`). */
  get host(): string {
    return this.#client().host;
  }

  #client(): ClientOrigin {
    this.#origin ??= clientOf(this.req, this.#scope.trustProxy);
    return this.#origin;
  }

  /** The request headers, lower-case names (coerced and validated by `schema.headers`). */
  get headers(): Headers {
    return this.req.headers as Headers;
  }

  /** A logger whose every line carries this request's id. */
  get logger(): Logger {
    this.#logger ??= this.#scope.logger.child(
      this.traceId === undefined ? { requestId: this.requestId } : { requestId: this.requestId, traceId: this.traceId },
    );
    return this.#logger;
  }

  /** Reads `page` and `limit` from the query (defaults 1 and 20, limit capped at 100); invalid values are a 400 problem. */
  parsePagination(): PageQuery {
    return parsePagination(this.query as Record<string, unknown>);
  }

  /** Responds 200 with `value` as JSON. */
  ok(value: unknown): void {
    this.statusCode = 200;
    this.reply = { kind: 'json', value };
  }

  /** Responds 201 with `value` as JSON. */
  created(value: unknown): void {
    this.statusCode = 201;
    this.reply = { kind: 'json', value };
  }

  /** Responds 204 without a body. */
  noContent(): void {
    this.statusCode = 204;
    this.reply = { kind: 'raw', body: '', type: '' };
  }

  /** Sets the status of the response. */
  status(code: number): this {
    if (!Number.isInteger(code) || code < 100 || code > 599)
      throw createError('FLO_ERR_BAD_STATUS', { subject: 'ctx.status()', range: '100..599', status: code });
    this.statusCode = code;
    return this;
  }

  /**
   * Sets a response header; ignored once the request was answered without its handler (see
   * `timeouts.handlerMs`), or once something wrote the response on `ctx.res` itself (a connect
   * middleware that ended it, see `fromConnect`): its head is gone already.
   */
  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.#expired !== undefined || this.res.headersSent) return this;
    this.res.setHeader(name, value);
    return this;
  }

  /**
   * Responds with a raw body (HTML, text, files) and its content type, keeping the current status.
   * A Node `Readable`, a web `ReadableStream` or an async iterable of strings or bytes is streamed
   * (default type `application/octet-stream`); a string or Buffer is sent whole (default `text/plain`).
   */
  send(body: string | Buffer | StreamSource, contentType?: string): void {
    this.reply = isStreamSource(body)
      ? { kind: 'stream', source: body, type: contentType ?? 'application/octet-stream' }
      : { kind: 'raw', body, type: contentType ?? 'text/plain; charset=utf-8' };
  }

  /**
   * Responds with server-sent events: each `{ data, event?, id?, retry? }` the source yields, heartbeat
   * comments while it is quiet, and a clean end (after `options.farewell`) as soon as the App starts
   * draining, so that clients reconnect elsewhere at once. The source is closed when the client goes.
   *
   * @example
   * ctx.sse(prices.subscribe({ after: ctx.lastEventId }), { heartbeatMs: 15_000 });
   */
  sse(source: AsyncIterable<SseEvent>, options: SseOptions = {}): void {
    this.reply = { kind: 'sse', source, options };
  }

  /**
   * Subscribes a websocket route's socket to `topic`: it receives what `app.publish(topic, data)`
   * sends, from any worker of the cluster, its primary and (with `coordination.url`) any replica,
   * until it closes or `ctx.unsubscribe(topic)`. Only in the route's `websocket` function (and later,
   * while the socket is open).
   *
   * @example
   * websocket: (socket, ctx) => { ctx.subscribe(`room:${ctx.params.room}`); }
   */
  subscribe(topic: string): void {
    if (this.#topics === undefined) throw createError('FLO_ERR_NOT_A_WEBSOCKET', { method: 'ctx.subscribe()' });
    this.#topics.subscribe(topic);
  }

  /** Stops what {@link subscribe} started for `topic`. */
  unsubscribe(topic: string): void {
    if (this.#topics === undefined) throw createError('FLO_ERR_NOT_A_WEBSOCKET', { method: 'ctx.unsubscribe()' });
    this.#topics.unsubscribe(topic);
  }

  /** The `Last-Event-ID` header: the id of the last event an event-stream client saw before it reconnected. */
  get lastEventId(): string | undefined {
    const id = this.req.headers['last-event-id'];
    return typeof id === 'string' ? id : undefined;
  }

  /** The request-scoped context for repositories: abort signal, request id, logger, OpenTelemetry context, state (also `currentContext()`). */
  context(): RequestContext {
    this.#context ??= {
      signal: this.#signal(),
      requestId: this.requestId,
      logger: this.logger,
      otel: this.otel,
      state: this.state as Record<string, unknown>,
    };
    return this.#context;
  }

  /** The locale negotiated from `Accept-Language` among the translator's locales. */
  get locale(): string | undefined {
    const translator = this.#scope.translator;
    if (translator === undefined) return undefined;
    this.#locale ??= negotiateLocale(this.req.headers['accept-language'], translator.locales());
    return this.#locale;
  }

  /** Translates `key` into the request's locale and marks the response with `Content-Language`; the key itself without a translator. */
  t(key: string, params?: Record<string, unknown>): string {
    const translator = this.#scope.translator;
    const locale = this.locale;
    if (translator === undefined || locale === undefined) return key;
    if (this.#expired === undefined) this.res.setHeader('Content-Language', locale);
    return translator.t(locale, key, params);
  }

  #signal(): AbortSignal {
    const abort = new AbortController();
    this.#abort = abort;
    if (this.#expired !== undefined) abort.abort(this.#expired);
    else
      this.res.once('close', () => {
        if (!this.res.writableEnded) abort.abort(new ClientGoneError());
      });
    return AbortSignal.any([abort.signal, this.#scope.deadline]);
  }

  #expire(reason: Error): void {
    this.#expired ??= reason;
    this.#abort?.abort(reason);
  }
}

/**
 * Ends a request's route work early (the pipeline's handler timeout): its signal aborts with `reason`,
 * and what the handler sets on `ctx` afterwards is ignored. Not part of the public API.
 *
 * @example
 * expireRequest(ctx, new DOMException('the handler ran longer than 20000 ms', 'TimeoutError'));
 */
export function expireRequest(ctx: Ctx, reason: Error): void {
  expire(ctx, reason);
}

/**
 * Gives a websocket route's `ctx` its open socket's topics: `ctx.subscribe` works from then on. Not
 * part of the public API.
 *
 * @example
 * attachSocket(ctx, { subscribe, unsubscribe });
 */
export function attachSocket(ctx: Ctx, topics: SocketTopics): void {
  attach(ctx, topics);
}

/**
 * The session the request asked for with `ctx.session()`, or `undefined`: what the pipeline saves
 * after the handler. Not part of the public API.
 *
 * @example
 * const session = sessionOf(ctx); // undefined for a request that never called ctx.session()
 */
export function sessionOf(ctx: Ctx): Promise<RequestSession> | undefined {
  return loaded(ctx);
}

/**
 * Whether the request's route work was ended early by {@link expireRequest}: its late results are dropped.
 *
 * @example
 * if (isExpired(ctx)) return; // answered already (503 HANDLER_TIMEOUT)
 */
export function isExpired(ctx: Ctx): boolean {
  return expired(ctx);
}
