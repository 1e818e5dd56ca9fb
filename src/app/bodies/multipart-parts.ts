import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { Busboy as BusboyFactory, BusboyFileStream, BusboyInstance } from '@fastify/busboy';
import { KError } from '../../errors/k-error.ts';
import { abandoned, tooLarge, unreadable } from './common.ts';
import { MULTIPART_DEFAULTS, type MultipartBody, type MultipartLimits, type MultipartPart } from './multipart-types.ts';

let busboyLib: typeof BusboyFactory | undefined;

/** @fastify/busboy, required on the first multipart body: a worker that never reads one does not load it. */
function Busboy(...args: Parameters<typeof BusboyFactory>): BusboyInstance {
  busboyLib ??= (createRequire(import.meta.url)('@fastify/busboy') as { Busboy: typeof BusboyFactory }).Busboy;
  return busboyLib(...args);
}

/**
 * The parts of a multipart body as they stream in: `MultipartReader`, which
 * feeds the request to busboy. The checks before
 * it starts (media type, boundary, declared length) are in multipart.ts.
 */

export const MULTIPART_TYPE = 'multipart/form-data';
/** Headers of one part: a form's have two or three short ones. */
const PART_HEADER_PAIRS = 32;
const PART_HEADER_BYTES = 16 * 1024;
const noop = () => {};

/**
 * Feeds the request to busboy (bytes counted against the body's limit,
 * backpressure kept: an unread file pauses the request) and queues the parts
 * it finds for the iterator.
 */
export class MultipartReader implements MultipartBody {
  readonly #queue: MultipartPart[] = [];
  readonly #waiting: PromiseWithResolvers<IteratorResult<MultipartPart, undefined>>[] = [];
  /** Every file stream handed out or queued, to end them when the body fails. */
  readonly #files = new Set<Readable>();
  #current: Readable | undefined;
  #error: KError | undefined;
  /** No more parts: busboy finished, the body failed, or the iteration was left. */
  #settled = false;
  #stop: () => void = noop;

  constructor(
    source: { req: IncomingMessage; boundary: string } | undefined,
    limit: number,
    signal: AbortSignal | undefined,
    options: MultipartLimits,
  ) {
    if (source === undefined) {
      this.#settled = true;
      return;
    }
    if (signal?.aborted) {
      this.#fail(abandoned(signal));
      return;
    }
    this.#start(source.req, source.boundary, limit, signal, options);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<MultipartPart, undefined>> {
    // a file the handler did not read to its end is drained, so that the next part can arrive
    if (this.#current !== undefined && !this.#current.readableEnded && !this.#current.destroyed) this.#current.resume();
    this.#current = undefined;
    if (this.#error !== undefined) {
      const error = this.#error;
      this.#error = undefined;
      return Promise.reject(error);
    }
    const part = this.#queue.shift();
    if (part !== undefined) return Promise.resolve(this.#handOut(part));
    if (this.#settled) return Promise.resolve({ value: undefined, done: true });
    const waiter = Promise.withResolvers<IteratorResult<MultipartPart, undefined>>();
    this.#waiting.push(waiter);
    return waiter.promise;
  }

  /** Leaving the iteration: stop reading the request; the unread files end. */
  return(): Promise<IteratorResult<MultipartPart, undefined>> {
    this.#close();
    this.#error = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(): Promise<IteratorResult<MultipartPart, undefined>> {
    return this.return();
  }

  #handOut(part: MultipartPart): IteratorResult<MultipartPart, undefined> {
    if (part.kind === 'file') this.#current = part.stream;
    return { value: part, done: false };
  }

  #push(part: MultipartPart): void {
    const waiter = this.#waiting.shift();
    if (waiter === undefined) this.#queue.push(part);
    else waiter.resolve(this.#handOut(part));
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#stop();
    for (const waiter of this.#waiting.splice(0)) waiter.resolve({ value: undefined, done: true });
  }

  /** The body failed: no more parts; the files still streaming error with `error`, and so does the iteration. */
  #fail(error: KError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#stop();
    for (const file of this.#files) file.destroy(error);
    this.#files.clear();
    this.#queue.length = 0;
    const waiters = this.#waiting.splice(0);
    if (waiters.length === 0) this.#error = error;
    for (const waiter of waiters) waiter.reject(error);
  }

  #close(): void {
    if (!this.#settled) {
      this.#settled = true;
      this.#stop();
    }
    for (const file of this.#files) if (!file.readableEnded) file.destroy();
    this.#files.clear();
    this.#queue.length = 0;
    for (const waiter of this.#waiting.splice(0)) waiter.resolve({ value: undefined, done: true });
  }

  #start(req: IncomingMessage, boundary: string, limit: number, signal: AbortSignal | undefined, options: MultipartLimits): void {
    const files = options.files ?? MULTIPART_DEFAULTS.files;
    const fields = options.fields ?? MULTIPART_DEFAULTS.fields;
    const fileBytes = options.fileBytes ?? limit;
    const fieldBytes = options.fieldBytes ?? MULTIPART_DEFAULTS.fieldBytes;
    const busboy: BusboyInstance = Busboy({
      // the boundary as checked, quoted: busboy parses exactly what was validated
      headers: { 'content-type': `${MULTIPART_TYPE}; boundary="${boundary}"` },
      limits: {
        files,
        fields,
        fileSize: fileBytes,
        fieldSize: fieldBytes,
        parts: files + fields,
        headerPairs: PART_HEADER_PAIRS,
        headerSize: PART_HEADER_BYTES,
      },
    });
    let size = 0;
    let reading = true;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) this.#fail(tooLarge(limit));
      else if (!busboy.write(chunk)) req.pause();
    };
    const onDrain = () => {
      if (reading) req.resume();
    };
    const onEnd = () => busboy.end();
    const onError = (error: Error) => this.#fail(unreadable(error));
    const onAborted = () => onError(new Error('request aborted'));
    const onAbort = () => this.#fail(abandoned(signal as AbortSignal));
    this.#stop = () => {
      reading = false;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      signal?.removeEventListener('abort', onAbort);
      // the rest of the body is never read: the response closes the connection
      if (!req.complete) req.pause();
    };

    busboy.on('field', (name, value, _nameTruncated, valueTruncated, _encoding, mimeType) => {
      if (this.#settled) return;
      if (typeof name !== 'string') this.#fail(nameless());
      else if (valueTruncated) this.#fail(tooLarge(fieldBytes, `the field '${clip(name)}'`));
      else this.#push({ kind: 'field', name, value, mimeType });
    });
    busboy.on('file', (name, file, filename, _encoding, mimeType) => {
      if (this.#settled) {
        file.resume();
        return;
      }
      if (typeof name !== 'string') {
        file.resume();
        this.#fail(nameless());
        return;
      }
      const stream = this.#wrap(file, fileBytes, filename ?? '');
      this.#push({ kind: 'file', name, filename: filename ?? '', mimeType, stream });
    });
    busboy.on('filesLimit', () => this.#fail(tooMany(`more than ${files} files`)));
    busboy.on('fieldsLimit', () => this.#fail(tooMany(`more than ${fields} fields`)));
    busboy.on('partsLimit', () => this.#fail(tooMany(`more than ${files + fields} parts`)));
    busboy.on('error', (error: unknown) => this.#fail(malformed(error)));
    busboy.on('drain', onDrain);
    busboy.on('finish', () => this.#finish());

    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    signal?.addEventListener('abort', onAbort, { once: true });
    req.resume();
  }

  /**
   * busboy's file stream behind one of ours: errors become `KError`s (413 past
   * the limit, 400 when the body is cut short), and destroying ours drains
   * busboy's so that the parts after it still arrive.
   */
  #wrap(file: BusboyFileStream, fileBytes: number, filename: string): Readable {
    const stream = new Readable({
      read: () => {
        file.resume();
      },
      destroy: (error, callback) => {
        this.#files.delete(stream);
        file.off('data', onData);
        file.resume();
        callback(error);
      },
    });
    // an error nobody listens for would be thrown: the handler may never read this file
    stream.on('error', noop);
    const onData = (chunk: Buffer) => {
      if (!stream.push(chunk)) file.pause();
    };
    file.on('data', onData);
    file.on('end', () => {
      this.#files.delete(stream);
      if (!file.truncated) stream.push(null);
    });
    file.on('limit', () => this.#fail(tooLarge(fileBytes, `the file '${clip(filename)}'`)));
    file.on('error', (error: unknown) => this.#fail(malformed(error)));
    this.#files.add(stream);
    return stream;
  }
}

function tooMany(what: string): KError {
  return KError.of('PAYLOAD_TOO_LARGE', `the multipart body has ${what}`, { headers: { Connection: 'close' } });
}

function malformed(cause: unknown): KError {
  return KError.badRequest('the multipart body is malformed or cut short', { cause });
}

function nameless(): KError {
  return KError.badRequest('a part of the multipart body has no name');
}

/** A client-chosen name, short enough for a message. */
function clip(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}
