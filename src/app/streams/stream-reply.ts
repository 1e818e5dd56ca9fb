import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReadableStream } from 'node:stream/web';
import { compressor } from '../compression/compression.ts';
import type { Encoding } from '../compression/negotiate.ts';

/** What a handler may stream: a Node `Readable`, a web `ReadableStream`, or an async iterable of strings or bytes. */
export type StreamSource = Readable | ReadableStream | AsyncIterable<string | Uint8Array>;

/** Whether `value` is something `sendStream` can send (a string or a Buffer is not: it is sent whole). */
export function isStreamSource(value: unknown): value is StreamSource {
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return false;
  return value instanceof Readable || value instanceof ReadableStream || Symbol.asyncIterator in value;
}

export interface StreamOptions {
  status: number;
  type: string;
  /** Aborts the stream: the client went away or the shutdown deadline passed (`ctx.context().signal`). */
  signal: AbortSignal;
  /** An error once the head went out: the connection is ended, the caller logs it. */
  onLateError(error: unknown): void;
  /** Counts the body's bytes as they go, before compression (read by the request log line, written when the response finishes). */
  sent: { bytes: number };
  /** Compress the body as it streams, each chunk flushed (see `compressor`); undefined: as it is. */
  encoding?: Encoding | undefined;
}

/**
 * Streams `source` as the response body with backpressure (`stream.pipeline`):
 * the source is destroyed when the client goes away or `signal` aborts. Without a
 * `Content-Length` set on `res` (which the source must then fill exactly: a file's
 * size), or once compressed, the body is sent chunked. The
 * head waits for the first chunk, so a source that fails at once rejects
 * before anything was sent (the caller answers with a problem); a failure
 * after it ends the connection (`onLateError`). A Node `Readable` is piped as
 * it is; a web stream or an iterable through Node's adapters. Resolves once it ended.
 *
 * @example
 * await sendStream(res, createReadStream('export.csv'), { status: 200, type: 'text/csv', signal, onLateError, sent: { bytes: 0 } });
 */
export async function sendStream(res: ServerResponse, source: StreamSource, o: StreamOptions): Promise<void> {
  const readable =
    source instanceof Readable
      ? source
      : source instanceof ReadableStream
        ? Readable.fromWeb(source)
        : Readable.from(source, { objectMode: false });
  try {
    await firstChunk(readable, o.signal);
  } catch (error) {
    readable.destroy();
    throw error;
  }
  res.statusCode = o.status;
  res.setHeader('Content-Type', o.type);
  let done: Promise<void>;
  // a Content-Length the handler set (a file's size) holds for the bytes as they are: kept, unless compressed
  if (o.encoding === undefined) done = pipeline(readable, res, { signal: o.signal });
  else {
    res.removeHeader('Content-Length');
    // byte ranges count the bytes as they are, not the compressed ones (nginx drops it too)
    res.removeHeader('Accept-Ranges');
    res.setHeader('Content-Encoding', o.encoding);
    done = pipeline(readable, compressor(o.encoding), res, { signal: o.signal });
  }
  // counted beside the pipe, which pauses the source for both when the client reads slowly
  readable.on('data', (chunk: string | Uint8Array) => {
    o.sent.bytes += byteLength(chunk);
  });
  try {
    await done;
  } catch (error) {
    if (!res.destroyed) res.destroy();
    // a client that went away, or the deadline, is no failure of the source's
    if (!isPrematureClose(error)) o.onLateError(error);
  }
}

/**
 * Resolves once the source has a first chunk buffered (or ended), leaving it in place; rejects when the
 * source fails or `signal` aborts first. No chunk is consumed: the source is then piped as it is, with no
 * wrapper per chunk.
 */
async function firstChunk(readable: Readable, signal: AbortSignal): Promise<void> {
  if (readable.readableLength > 0 || readable.readableEnded) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: unknown) => {
      readable.off('readable', settle).off('end', settle).off('error', settle);
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () => settle(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    readable.on('readable', settle).once('end', settle).once('error', settle);
  });
  // a removed 'readable' listener lets the stream flow again only from the next tick on
  await new Promise((resolve) => process.nextTick(resolve));
}

function byteLength(chunk: string | Uint8Array): number {
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
}

function isPrematureClose(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ABORT_ERR' || code === 'ECONNRESET';
}
