import type { IncomingMessage } from 'node:http';
import { KError } from '../../errors/k-error.ts';
import {
  checkDeclaredLength,
  forbiddenFieldName,
  forbiddenKey,
  hasBody,
  isUtf8Charset,
  mediaTypeOf,
  readBytes,
  unsupported,
} from './common.ts';
import { decodeUtf8 } from './utf8.ts';

const FORM_TYPE = 'application/x-www-form-urlencoded';
const ACCEPTED = [FORM_TYPE];
/** Default for `FormLimits.fields`: as many as body-parser and qs allow. */
export const DEFAULT_FORM_FIELDS = 1000;

/** A parsed form: each name once, a repeated name's values in order. */
export type FormBody = Record<string, string | string[]>;

export interface FormLimits {
  /** Most `name=value` pairs a form may have (413 beyond); default 1000. */
  fields?: number;
}

/**
 * Reads an `application/x-www-form-urlencoded` body (UTF-8, as the URL
 * Standard decodes it: `+` is a space, a malformed `%` escape stays as it is)
 * into a plain object: a name sent once maps to its string, a repeated one to
 * the array of its strings. Names are kept flat (`a[b]` is one name). The
 * JSON parser's guard applies: a `__proto__` name, or one that expands to
 * `__proto__` or `constructor.prototype` (`a[__proto__]`, `constructor.prototype`), is a 400.
 * Another media type or charset is a 415; more than `fields` pairs a 413.
 * Bytes that are not UTF-8, sent as they are or percent-encoded, are a 400
 * `INVALID_UTF8` (where the URL Standard would put U+FFFD in their place).
 * `undefined` when the request has no body.
 */
export async function readFormBody(
  req: IncomingMessage,
  limit: number,
  signal?: AbortSignal,
  limits: FormLimits = {},
): Promise<FormBody | undefined> {
  if (!hasBody(req)) return undefined;
  const header = req.headers['content-type'];
  const { type, parameters } = mediaTypeOf(header, ACCEPTED);
  if (type !== FORM_TYPE) throw unsupported(ACCEPTED, header);
  if (!isUtf8Charset(parameters.charset)) {
    throw unsupported(ACCEPTED, header, `the charset '${parameters.charset?.slice(0, 40)}' is not supported: a form body is UTF-8`);
  }
  checkDeclaredLength(req, limit);
  const text = decodeUtf8(await readBytes(req, limit, signal));
  const maxFields = limits.fields ?? DEFAULT_FORM_FIELDS;
  if (countPairs(text) > maxFields) {
    throw KError.of('PAYLOAD_TOO_LARGE', `the form has more than ${maxFields} fields`, { headers: { Connection: 'close' } });
  }
  const form: FormBody = {};
  let field = 0;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      field++;
      const pair = text.slice(start, end);
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), field, 'name');
      const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1), field, 'value');
      if (forbiddenFieldName(name)) throw forbiddenKey();
      const seen = Object.hasOwn(form, name) ? form[name] : undefined;
      if (seen === undefined) form[name] = value;
      else if (typeof seen === 'string') form[name] = [seen, value];
      else seen.push(value);
    }
    start = end + 1;
  }
  return form;
}

/**
 * A form's name or value as the URL Standard decodes it (`+` a space, then
 * `%XX` escapes as bytes; a malformed escape kept as it is), except that
 * escaped bytes that are not UTF-8 are a 400 instead of U+FFFD.
 */
function decodeComponent(raw: string, field: number, part: 'name' | 'value'): string {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!spaced.includes('%')) return spaced;
  try {
    // well-formed escapes of UTF-8: the common case, decoded natively
    return decodeURIComponent(spaced);
  } catch {
    return percentDecode(spaced, `the ${part} of form field ${field}, percent-decoded,`);
  }
}

/** The URL Standard's percent-decoding, then strict UTF-8: `%zz` or a lone `%` stays, invalid escaped bytes are a 400. */
function percentDecode(text: string, what: string): string {
  const bytes = Buffer.from(text, 'utf8');
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const high = bytes[i] === 0x25 ? hexValue(bytes[i + 1]) : -1;
    const low = high === -1 ? -1 : hexValue(bytes[i + 2]);
    if (low === -1) {
      bytes[length++] = bytes[i] as number;
      continue;
    }
    bytes[length++] = high * 16 + low;
    i += 2;
  }
  return decodeUtf8(bytes.subarray(0, length), what);
}

/** The value of a hexadecimal digit's byte, -1 for any other byte (or none). */
function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The non-empty `&`-separated pieces of a form, counted before any is decoded. */
function countPairs(text: string): number {
  let count = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) count++;
    start = end + 1;
  }
  return count;
}
