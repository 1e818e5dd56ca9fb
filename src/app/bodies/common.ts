import type { IncomingMessage } from 'node:http';
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

/** A parsed `Content-Type`: the media type in lower case, and its parameters (names in lower case, values unquoted). */
export interface MediaType {
  type: string;
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses a `Content-Type` header (RFC 9110 §8.3.1): `type/subtype` followed by
 * `; name=value` parameters, values tokens or quoted strings. A malformed
 * parameter is skipped; a repeated one keeps its first value. `undefined` for
 * a missing header or one without a `type/subtype`.
 */
export function parseMediaType(header: string | undefined): MediaType | undefined {
  if (header === undefined) return undefined;
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  const slash = type.indexOf('/');
  if (slash <= 0 || slash === type.length - 1 || !TOKEN.test(type.slice(0, slash)) || !TOKEN.test(type.slice(slash + 1))) {
    return undefined;
  }
  const params = new Map<string, string>();
  let i = semi === -1 ? header.length : semi + 1;
  while (i < header.length) {
    const eq = header.indexOf('=', i);
    const nextSemi = header.indexOf(';', i);
    if (eq === -1 || (nextSemi !== -1 && nextSemi < eq)) {
      // a parameter without a value: skipped
      if (nextSemi === -1) break;
      i = nextSemi + 1;
      continue;
    }
    const name = header.slice(i, eq).trim().toLowerCase();
    let value: string;
    let j = eq + 1;
    if (header[j] === '"') {
      value = '';
      j++;
      while (j < header.length && header[j] !== '"') {
        if (header[j] === '\\' && j + 1 < header.length) j++;
        value += header[j];
        j++;
      }
      // past the closing quote, to the next separator
      const after = header.indexOf(';', j);
      const closed = j < header.length;
      i = after === -1 ? header.length : after + 1;
      if (!closed) continue;
    } else {
      const end = header.indexOf(';', j);
      value = header.slice(j, end === -1 ? header.length : end).trim();
      i = end === -1 ? header.length : end + 1;
    }
    if (TOKEN.test(name) && !params.has(name)) params.set(name, value);
  }
  return { type, params };
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
