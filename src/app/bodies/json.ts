import type { IncomingMessage } from 'node:http';
import secureJson from 'secure-json-parse';
import { KError } from '../../errors/k-error.ts';
import { checkDeclaredLength, hasBody, isUtf8Charset, mediaTypeOf, readBytes, unsupported } from './common.ts';
import { decodeUtf8 } from './utf8.ts';

const ACCEPTED = ['application/json'];
/** A structured syntax suffix type (RFC 6839): `application/merge-patch+json`, `application/problem+json`. */
const JSON_SUFFIX_TYPE = /^application\/[\w.+-]+\+json$/;
/** Deepest nesting of arrays and objects a body may have: deeper ones break recursive code such as `JSON.stringify`. */
export const MAX_BODY_DEPTH = 512;

/**
 * Reads and parses a JSON request body: only JSON media types in UTF-8 (415
 * otherwise: another type or charset, or a malformed `Content-Type`), at most
 * `limit` bytes counted while streaming (413), bytes that are not UTF-8 (400
 * `INVALID_UTF8`), malformed JSON (400) and `__proto__` /
 * `constructor.prototype` keys (400) rejected.
 */
export async function readJsonBody(req: IncomingMessage, limit: number, signal?: AbortSignal): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  checkContentType(req.headers['content-type']);
  checkDeclaredLength(req, limit);
  const text = decodeUtf8(await readBytes(req, limit, signal));
  if (text.length === 0) return undefined;
  if (nestedTooDeep(text, MAX_BODY_DEPTH)) {
    throw KError.of('BAD_REQUEST', `the body is nested more than ${MAX_BODY_DEPTH} levels deep`);
  }
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('forbidden prototype property')) {
      throw KError.of('FORBIDDEN_KEY', "the body contains a forbidden key ('__proto__' or 'constructor.prototype')");
    }
    throw KError.of('MALFORMED_JSON', 'the body is not valid JSON');
  }
}

/** Whether JSON text nests arrays and objects deeper than `max` (brackets inside strings do not count); linear, no recursion. */
function nestedTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // a backslash escapes the next character
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A JSON media type (`application/json` or `application/*+json`) in UTF-8, else a 415 saying what is wrong. */
function checkContentType(header: string | undefined): void {
  const { type, parameters } = mediaTypeOf(header, ACCEPTED);
  if (type !== 'application/json' && !JSON_SUFFIX_TYPE.test(type)) {
    throw unsupported(ACCEPTED, header, `expected an application/json body in UTF-8, got '${header?.slice(0, 100)}'`);
  }
  const charset = parameters.charset;
  if (!isUtf8Charset(charset)) {
    throw unsupported(ACCEPTED, header, `the charset '${charset?.slice(0, 40)}' is not supported: a JSON body is UTF-8 (RFC 8259)`);
  }
}
