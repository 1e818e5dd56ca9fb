import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import { hasBody } from '../bodies/index.ts';
import { type Compression, compressBody, encodingOf } from '../compression/compression.ts';
import { closeQuietly, eventStream, SSE_HEADERS } from '../streams/sse.ts';
import { sendStream } from '../streams/stream-reply.ts';
import { type Ctx, isExpired, type Reply } from './ctx.ts';

/** What writing a reply reads of its App. */
export interface ReplyHost {
  /** The App is shutting down (a retiring worker too): responses close their connection. */
  readonly closingConnections: boolean;
  /** Aborts when the App starts draining: event streams end then. */
  readonly drain: AbortSignal;
  /** `compression`; undefined when `compression.enabled` is false. */
  readonly compression: Compression | undefined;
}

/** The bytes of each streamed response so far, for its log line. */
const streamed = new WeakMap<Ctx, { bytes: number }>();

/**
 * Writes the reply a handler chose (`ctx.reply`): JSON through the route's
 * response schema (`ctx.serializer`) or `JSON.stringify`, a raw body, a stream
 * or an event stream, compressed when `compression` says so (see `encodingOf`).
 * Throws when a JSON value does not fit its schema, and returns a promise that
 * rejects when a stream fails before its first chunk (or a large body's
 * compression fails): in both cases nothing was sent, and the caller answers
 * with a problem. A stream that fails later ends its connection and goes to
 * `onLateError`.
 *
 * @example
 * writeReply(host, ctx, (err) => ctx.logger.error({ err }, 'response stream failed'))?.catch(fail);
 */
export function writeReply(host: ReplyHost, ctx: Ctx, onLateError: (error: unknown) => void): void | Promise<void> {
  const { res, reply } = ctx;
  if (reply.kind === 'upgraded') return;
  let body: string | Buffer = '';
  let type = '';
  if (reply.kind === 'json') {
    // the route's response schema shapes the body (a value that does not fit throws: nothing is sent but the 500)
    const serialize = ctx.serializer;
    body = (serialize === undefined ? undefined : serialize(ctx.statusCode, reply.value)) ?? JSON.stringify(reply.value) ?? 'null';
    type = 'application/json; charset=utf-8';
  } else if (reply.kind === 'raw') {
    body = reply.body;
    type = reply.type;
  } else if (reply.kind === 'stream' || reply.kind === 'sse') {
    return stream(host, ctx, reply, onLateError);
  }
  if (type !== '') res.setHeader('Content-Type', type);
  const c = host.compression;
  if (c !== undefined && body.length > 0) {
    const encoding = encodingOf(
      c,
      ctx.req,
      res,
      ctx.statusCode,
      type || String(res.getHeader('content-type') ?? ''),
      Buffer.byteLength(body),
    );
    if (encoding !== undefined) {
      const compressed = compressBody(encoding, typeof body === 'string' ? Buffer.from(body) : body);
      res.setHeader('Content-Encoding', encoding);
      // byte ranges count the bytes as they are, not the compressed ones (a file's: app.serveStatic)
      res.removeHeader('Accept-Ranges');
      if (Buffer.isBuffer(compressed)) return end(host, ctx, compressed);
      return compressed.then((out) => {
        // answered meanwhile (a handler timeout), or nobody left to answer
        if (!isExpired(ctx) && !res.headersSent && !res.destroyed) end(host, ctx, out);
      });
    }
  }
  end(host, ctx, body);
}

function end(host: ReplyHost, ctx: Ctx, body: string | Buffer): void {
  const res = ctx.res;
  if (ctx.statusCode !== 204 && ctx.statusCode !== 304) res.setHeader('Content-Length', Buffer.byteLength(body));
  if (mustClose(host, ctx.req)) res.setHeader('Connection', 'close');
  res.statusCode = ctx.statusCode;
  res.end(body);
}

/** The bytes a streamed response has sent so far; `undefined` for any other response. */
export function bytesSent(ctx: Ctx): number | undefined {
  return streamed.get(ctx)?.bytes;
}

/**
 * Close the connection after this response once the App shuts down (a retiring worker too), and when the
 * request's body has not been received in full: node:http would otherwise read
 * and discard all of it (bounded only by `timeouts.requestMs`) to keep the
 * connection alive.
 */
export function mustClose(host: ReplyHost, req: IncomingMessage): boolean {
  return host.closingConnections || (req.complete === false && hasBody(req));
}

/**
 * A streamed body (`ctx.send(stream)`, a returned stream) or an event stream (`ctx.sse`): sent with
 * backpressure, ended when the client goes away or the shutdown deadline passes (`ctx.context().signal`);
 * an event stream also ends as soon as the App starts draining (`host.drain`).
 */
function stream(
  host: ReplyHost,
  ctx: Ctx,
  reply: Extract<Reply, { kind: 'stream' | 'sse' }>,
  onLateError: (error: unknown) => void,
): Promise<void> {
  const res = ctx.res;
  if (reply.kind === 'sse') for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
  if (mustClose(host, ctx.req)) res.setHeader('Connection', 'close');
  const sent = { bytes: 0 };
  streamed.set(ctx, sent);
  const source = reply.kind === 'sse' ? eventStream(reply.source, reply.options, host.drain) : reply.source;
  const type = reply.kind === 'sse' ? SSE_HEADERS['Content-Type'] : reply.type;
  // an event stream is never compressed (see compressible.ts); another stream as it streams, unless its declared
  // length (a file's) is under the threshold
  const c = host.compression;
  const encoding =
    c === undefined || reply.kind === 'sse' ? undefined : encodingOf(c, ctx.req, res, ctx.statusCode, type, declaredLength(res));
  return sendStream(res, source, { status: ctx.statusCode, type, signal: ctx.context().signal, sent, onLateError, encoding });
}

/** The `Content-Length` a handler set on a streamed reply; `Infinity` when it set none. */
function declaredLength(res: ServerResponse): number {
  const length = Number(res.getHeader('content-length') ?? Number.NaN);
  return Number.isSafeInteger(length) && length >= 0 ? length : Number.POSITIVE_INFINITY;
}

/** Closes the source of a stream or event-stream reply that will not be sent (an error replaced it). */
export function discardReply(reply: Reply): void {
  if (reply.kind !== 'stream' && reply.kind !== 'sse') return;
  const source = reply.source;
  if (source instanceof Readable) source.destroy();
  else if (source instanceof ReadableStream) source.cancel().catch(() => {});
  else closeQuietly(source[Symbol.asyncIterator]());
}
