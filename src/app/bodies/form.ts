import type { IncomingMessage } from 'node:http';
import { KError } from '../../errors/k-error.ts';
import { checkDeclaredLength, forbiddenFieldName, forbiddenKey, hasBody, parseMediaType, readBytes, unsupported } from './common.ts';

const FORM_TYPE = 'application/x-www-form-urlencoded';
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
  const media = parseMediaType(header);
  const charset = media?.params.get('charset')?.toLowerCase();
  if (media?.type !== FORM_TYPE || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw unsupported([FORM_TYPE], header);
  }
  checkDeclaredLength(req, limit);
  const text = (await readBytes(req, limit, signal)).toString('utf8');
  const maxFields = limits.fields ?? DEFAULT_FORM_FIELDS;
  if (countPairs(text) > maxFields) {
    throw KError.of('PAYLOAD_TOO_LARGE', `the form has more than ${maxFields} fields`, { headers: { Connection: 'close' } });
  }
  const form: FormBody = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (forbiddenFieldName(name)) throw forbiddenKey();
    const seen = Object.hasOwn(form, name) ? form[name] : undefined;
    if (seen === undefined) form[name] = value;
    else if (typeof seen === 'string') form[name] = [seen, value];
    else seen.push(value);
  }
  return form;
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
