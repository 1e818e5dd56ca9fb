import type { IncomingMessage } from 'node:http';
import { parse as parseContentType } from 'fast-content-type-parse';
import { KError } from '../../errors/k-error.ts';

/** Whether the request announces a body (`Content-Length` > 0 or any `Transfer-Encoding`). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The 413 of a body (or a part of it) past its limit; the connection closes, its rest is never read. */
export function tooLarge(limit: number, what = 'the body'): KError {
  return KError.of('PAYLOAD_TOO_LARGE', `${what} exceeds the limit of ${limit} bytes`, { headers: { Connection: 'close' } });
}

/** The 400 of a request whose body stopped arriving (the client aborted, the socket failed). */
export function unreadable(cause: unknown): KError {
  return KError.badRequest('the request body could not be read', { cause, headers: { Connection: 'close' } });
}

/** The 503 of a body whose reading was called off by the caller's signal (the client left, the shutdown deadline passed). */
export function abandoned(signal: AbortSignal): KError {
  return KError.of('UNAVAILABLE', 'the request body was not read to its end', {
    cause: signal.reason,
    headers: { Connection: 'close' },
  });
}

/** The 415 of a media type the route does not accept; `accepted` goes into `Accept-Post`. */
export function unsupported(accepted: readonly string[], header: string | undefined, detail?: string): KError {
  const got = (header ?? '').slice(0, 100) || 'none';
  return KError.of('UNSUPPORTED_MEDIA_TYPE', detail ?? `expected a body of type ${accepted.join(' or ')}, got '${got}'`, {
    headers: { 'Accept-Post': accepted.join(', ') },
  });
}

/** A declared `Content-Length` above the limit: refused before a byte is read. */
export function checkDeclaredLength(req: IncomingMessage, limit: number): void {
  if (Number(req.headers['content-length']) > limit) throw tooLarge(limit);
}

/**
 * A parsed `Content-Type`: the media type in lower case, and its parameters
 * (names in lower case, values as sent, unquoted; a repeated one keeps its
 * first value) in an object without a prototype.
 */
export interface MediaType {
  type: string;
  parameters: Readonly<Record<string, string>>;
}

/**
 * The `Content-Type` of a request that has a body, parsed as RFC 9110
 * §8.3.1 writes it (`type/subtype`, then `; name=value` parameters whose
 * values are tokens or quoted strings), by fast-content-type-parse: the one
 * parser of every body kind. A missing header is the 415 of `accepted`; a
 * malformed one (no `type/subtype`, a parameter without a value, an
 * unterminated quoted string) is a 415 whose detail says what is wrong.
 *
 * @example
 * mediaTypeOf('Application/JSON; Charset="UTF-8"', ['application/json']); // { type: 'application/json', parameters: { charset: 'UTF-8' } }
 * mediaTypeOf('application/json; charset', ['application/json']); // throws 415: "… has a malformed parameter …"
 */
export function mediaTypeOf(header: string | undefined, accepted: readonly string[]): MediaType {
  if (header === undefined || header === '') throw unsupported(accepted, header);
  try {
    return parseContentType(header);
  } catch (error) {
    const what =
      (error as Error).message === 'invalid parameter format'
        ? 'has a malformed parameter (each must be name=value, the value a token or a quoted string)'
        : 'is not a media type (type/subtype)';
    throw unsupported(accepted, header, `the Content-Type '${header.slice(0, 100)}' ${what}`);
  }
}

/** Whether a `charset` parameter means UTF-8: absent, or `utf-8` or its alias `utf8`, in any case. */
export function isUtf8Charset(charset: string | undefined): boolean {
  if (charset === undefined) return true;
  const name = charset.toLowerCase();
  return name === 'utf-8' || name === 'utf8';
}

/** Whether `type` (`text/plain`) matches `pattern` (`text/plain`, `text/*` or `*\/*`). */
export function mediaTypeMatches(type: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  if (p === '*/*' || p === type) return true;
  return p.endsWith('/*') && type.startsWith(p.slice(0, -1));
}

/**
 * Reads a whole body into one Buffer, counting while streaming: past `limit`
 * bytes it stops reading (the request is paused, never destroyed, so that the
 * 413 can still be sent) and rejects with a 413.
 */
export function readBytes(req: IncomingMessage, limit: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abandoned(signal));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      signal?.removeEventListener('abort', onAbort);
    };
    const stop = (error: KError) => {
      cleanup();
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stop(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(unreadable(error));
    };
    const onAborted = () => onError(new Error('request aborted'));
    const onAbort = () => stop(abandoned(signal as AbortSignal));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether a form or multipart field name would reach a prototype once
 * expanded the way many libraries expand `a[b][c]` and `a.b.c`: a `__proto__`
 * segment, or `constructor` followed by `prototype` — the shapes the JSON
 * parser refuses.
 */
export function forbiddenFieldName(name: string): boolean {
  if (!name.includes('__proto__') && !name.includes('prototype')) return false;
  const segments = name.split(/[[\].]+/);
  for (let i = 0; i < segments.length; i++) {
    if (segments[i] === '__proto__') return true;
    if (segments[i] === 'constructor' && segments[i + 1] === 'prototype') return true;
  }
  return false;
}

/** The 400 of a forbidden field name (see `forbiddenFieldName`). */
export function forbiddenKey(): KError {
  return KError.of('FORBIDDEN_KEY', "the body contains a forbidden key ('__proto__' or 'constructor.prototype')");
}
