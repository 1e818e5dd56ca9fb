import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReadableStream } from 'node:stream/web';
import { closeQuietly } from './sse.ts';

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
  /** Counts the body's bytes as they go (read by the request log line, written when the response finishes). */
  sent: { bytes: number };
}

/**
 * Streams `source` as the response body with backpressure (`stream.pipeline`):
 * the source is destroyed when the client goes away or `signal` aborts. The
 * head waits for the first chunk, so a source that fails at once rejects
 * before anything was sent (the caller answers with a problem); a failure
 * after it ends the connection (`onLateError`). Resolves once it ended.
 *
 * @example
 * await sendStream(res, createReadStream('export.csv'), { status: 200, type: 'text/csv', signal, onLateError, sent: { bytes: 0 } });
 */
export async function sendStream(res: ServerResponse, source: StreamSource, o: StreamOptions): Promise<void> {
  const readable = source instanceof ReadableStream ? Readable.fromWeb(source) : source;
  const chunks = (readable as AsyncIterable<string | Uint8Array>)[Symbol.asyncIterator]();
  const first = await abortable(chunks.next(), o.signal).catch((error: unknown) => {
    closeQuietly(chunks);
    throw error;
  });
  async function* body() {
    try {
      if (first.done === true) return;
      o.sent.bytes += byteLength(first.value);
      yield first.value;
      for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
        o.sent.bytes += byteLength(next.value);
        yield next.value;
      }
    } finally {
      closeQuietly(chunks);
    }
  }
  res.statusCode = o.status;
  res.setHeader('Content-Type', o.type);
  res.removeHeader('Content-Length');
  try {
    await pipeline(body, res, { signal: o.signal });
  } catch (error) {
    if (!res.destroyed) res.destroy();
    // a client that went away is no error of the source's
    if (!isPrematureClose(error) && !o.signal.aborted) o.onLateError(error);
  }
}

function byteLength(chunk: string | Uint8Array): number {
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
}

function isPrematureClose(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ABORT_ERR' || code === 'ECONNRESET';
}

/** `promise`, or a rejection with the signal's reason once it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
