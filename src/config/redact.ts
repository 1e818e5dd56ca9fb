/** What replaces a secret. */
export const REDACTED = '[redacted]';

const SECRET_KEY = /(secret|password|passwd|token|api[-_]?key|private[-_]?key|credential|auth)/i;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]+@/gi;
/** A password in a URL's query (`postgres://db/app?password=…`, as libpq reads it). */
const URL_QUERY_SECRET = /([?&](?:password|passwd|pass|pwd)=)[^&#\s]*/gi;

/**
 * A deep copy of a config that is safe to print: the value of every key that
 * looks secret (`password`, `apiKey`, `token`, …), the user info of every
 * URL (`https://user:pass@host`) and a `password` in a URL's query become `"[redacted]"`. Booleans and nulls
 * under such keys are kept: they are switches, not secrets (`cors.credentials`). A list of secrets
 * (`cookies.secrets`) keeps its length, each item redacted: how many are configured is no secret.
 *
 * @example
 * redactConfig({ db: { url: 'postgres://app:s3cret@db/app', password: 'x' } });
 * // { db: { url: 'postgres://[redacted]@db/app', password: '[redacted]' } }
 */
export function redactConfig(config: object): Record<string, unknown> {
  const copy = redact(config, new WeakMap());
  return typeof copy === 'object' && copy !== null && !Array.isArray(copy) ? (copy as Record<string, unknown>) : {};
}

function redact(value: unknown, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return value.replace(URL_USERINFO, `$1${REDACTED}@`).replace(URL_QUERY_SECRET, `$1${REDACTED}`);
  if (typeof value !== 'object' || value === null) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(redact(item, seen));
    return out;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, inner] of Object.entries(value)) {
    const secret = SECRET_KEY.test(key) && typeof inner !== 'boolean' && inner !== null && inner !== undefined;
    Object.defineProperty(out, key, {
      value: secret ? redactedValue(inner) : redact(inner, seen),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A secret key's value: `"[redacted]"`, or a list of as many for a list. */
function redactedValue(value: unknown): unknown {
  return Array.isArray(value) ? value.map(() => REDACTED) : REDACTED;
}
