import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { ResolvedConfig } from '../../config/types.ts';
import { isCompressible } from './compressible.ts';
import { type Encoding, negotiateEncoding } from './negotiate.ts';

/**
 * Buffered bodies up to this size are compressed on the main thread, larger ones on libuv's thread
 * pool: measured on Node 24 (bench/results/compression.md), a 2.6 KB page takes 21–38 µs in the
 * synchronous calls and ~120 µs of CPU through the callback API, which makes a stream per call; a
 * 130 KB one 160–930 µs either way, long enough to hold other requests back.
 */
const SYNC_LIMIT = 64 * 1024;

/** `compression` as the pipeline reads it: `undefined` when `compression.enabled` is false. */
export interface Compression {
  /** The encodings offered, the server's preference first (zstd only where this Node has it). */
  readonly encodings: readonly Encoding[];
  readonly thresholdBytes: number;
}

/**
 * The App's compression settings, once.
 *
 * @example
 * const compression = compressionOf(config.compression); // undefined when disabled
 */
export function compressionOf(config: ResolvedConfig['compression']): Compression | undefined {
  if (!config.enabled) return undefined;
  const encodings = config.encodings.filter((e) => e !== 'zstd' || typeof zlib.zstdCompressSync === 'function');
  return Object.freeze({ encodings: Object.freeze(encodings), thresholdBytes: config.thresholdBytes });
}

/**
 * The encoding a reply is compressed with, or `undefined` to send it as it is. A compressible reply
 * (its type, a status with a body) gets `Vary: Accept-Encoding` whatever is chosen, so that caches
 * keep one copy per encoding; a reply that carries a `Content-Encoding` already is left alone. A HEAD
 * request, a `Cache-Control: no-transform` reply, a body under the threshold and a client that
 * accepts none of the encodings get none. `size`: the body's bytes, `Infinity` for a stream.
 *
 * @example
 * const encoding = encodingOf(compression, ctx.req, res, 200, 'application/json', body.length);
 */
export function encodingOf(
  c: Compression,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  size: number,
): Encoding | undefined {
  if (status < 200 || status === 204 || status === 206 || status === 304 || size === 0) return undefined;
  if (!isCompressible(type) || res.hasHeader('content-encoding')) return undefined;
  addVary(res);
  if (size < c.thresholdBytes || req.method === 'HEAD' || noTransform(res.getHeader('cache-control'))) return undefined;
  const encoding = negotiateEncoding(req.headers['accept-encoding'], c.encodings);
  return encoding === 'identity' ? undefined : encoding;
}

/**
 * A buffered body compressed: at once (synchronously) when it is small, through the thread pool
 * otherwise (see `SYNC_LIMIT`).
 *
 * @example
 * const out = compressBody('gzip', Buffer.from(json)); // Buffer, or a Promise of one when large
 */
export function compressBody(encoding: Encoding, body: Buffer): Buffer | Promise<Buffer> {
  if (body.length <= SYNC_LIMIT) return compressSync(encoding, body);
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, out: Buffer) => (error === null ? resolve(out) : reject(error));
    if (encoding === 'gzip') zlib.gzip(body, GZIP, done);
    else if (encoding === 'br') zlib.brotliCompress(body, brotli(body.length), done);
    else zlib.zstdCompress(body, zstd(body.length), done);
  });
}

/** A buffered body compressed on the spot (problem responses, small replies). */
export function compressSync(encoding: Encoding, body: Buffer): Buffer {
  if (encoding === 'gzip') return zlib.gzipSync(body, GZIP);
  if (encoding === 'br') return zlib.brotliCompressSync(body, brotli(body.length));
  return zlib.zstdCompressSync(body, zstd(body.length));
}

/**
 * A compressing stream for a streamed reply that flushes after every chunk it is given: what the
 * source produces reaches the client when it is produced, compressed, rather than when the
 * compressor's window fills (a live feed would otherwise stall for kilobytes).
 *
 * @example
 * await pipeline(source, compressor('br'), res);
 */
export function compressor(encoding: Encoding): Transform {
  if (encoding === 'gzip') return zlib.createGzip({ ...GZIP, flush: zlib.constants.Z_SYNC_FLUSH });
  if (encoding === 'br') return zlib.createBrotliCompress({ ...brotli(0), flush: zlib.constants.BROTLI_OPERATION_FLUSH });
  return zlib.createZstdCompress({ flush: zlib.constants.ZSTD_e_flush });
}

/** gzip's default level (6): its best trade for small bodies in the measurements. */
const GZIP: zlib.ZlibOptions = { level: zlib.constants.Z_DEFAULT_COMPRESSION };
/**
 * zstd at its default level (3), told the body's size: it then sizes its window and tables to the
 * body (the same bytes out, ~15 % less CPU for a 2 KB page than with the default context).
 */
function zstd(size: number): zlib.ZstdOptions {
  return { pledgedSrcSize: size };
}

/**
 * Brotli at quality 4 (its default, 11, costs ~20× the CPU for a few % less), told the size when
 * known, and its window no larger than the body (the same bytes out, ~25 % less CPU for a 2 KB page:
 * a smaller context to allocate and clear).
 */
function brotli(size: number): zlib.BrotliOptions {
  const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_SIZE_HINT, BROTLI_PARAM_LGWIN } = zlib.constants;
  const params: Record<number, number> = { [BROTLI_PARAM_QUALITY]: 4 };
  if (size > 0) {
    params[BROTLI_PARAM_SIZE_HINT] = size;
    params[BROTLI_PARAM_LGWIN] = Math.min(22, Math.max(10, Math.ceil(Math.log2(size))));
  }
  return { params };
}

/**
 * Adds `Accept-Encoding` to the reply's `Vary` (kept as it is when it names it, or `*`, already).
 *
 * @example
 * addVary(res); // Vary: Origin → Vary: Origin, Accept-Encoding
 */
export function addVary(res: ServerResponse): void {
  const vary = res.getHeader('vary');
  if (vary === undefined) {
    res.setHeader('Vary', 'Accept-Encoding');
    return;
  }
  const current = Array.isArray(vary) ? vary.join(', ') : String(vary);
  if (/(?:^|,)\s*(?:\*|accept-encoding)\s*(?:,|$)/i.test(current)) return;
  res.setHeader('Vary', current === '' ? 'Accept-Encoding' : `${current}, Accept-Encoding`);
}

function noTransform(cacheControl: OutgoingHttpHeader | undefined): boolean {
  if (cacheControl === undefined) return false;
  return /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(Array.isArray(cacheControl) ? cacheControl.join(',') : String(cacheControl));
}
