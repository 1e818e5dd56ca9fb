import { safeParse as parseContentType } from 'fast-content-type-parse';
import { BODY_KINDS } from '../bodies/kinds.ts';
import type { Route } from './route.ts';

const LIMITS = { multipart: ['files', 'fileBytes', 'fields', 'fieldBytes'], form: ['fields'] } as const;

/** Whether a route's declared media type is one (`type/subtype` or `type/*`), without parameters: as the body parsers read `Content-Type`. */
function isMediaType(value: unknown): boolean {
  return typeof value === 'string' && value !== '' && parseContentType(value).type === value.toLowerCase();
}

/**
 * What is wrong with a route's body options, checked at registration (a
 * wrong limit would otherwise fail in the parser, as a 500); `undefined` when
 * they are sound. `schema.body` applies to what can be validated as a value:
 * JSON, a form, and a buffered multipart body's fields.
 *
 * @example
 * bodyOptionsProblem({ ...route, body: 'xml' }); // "body must be one of 'json', 'text', …"
 */
export function bodyOptionsProblem(route: Route): string | undefined {
  const kind = route.body ?? 'json';
  if (!BODY_KINDS.includes(kind)) return `body must be one of ${BODY_KINDS.map((k) => `'${k}'`).join(', ')}, got ${JSON.stringify(kind)}`;
  if (route.kind !== undefined && route.kind !== 'json' && route.kind !== 'sse')
    return `kind must be 'json' or 'sse', got ${JSON.stringify(route.kind)}`;
  for (const [option, keys] of Object.entries(LIMITS)) {
    const given = route[option as keyof typeof LIMITS] as Record<string, unknown> | undefined;
    if (given === undefined) continue;
    if (kind !== option) return `${option} limits apply to a ${option} body, and this route's body is ${kind}`;
    for (const key of keys) {
      const value = given[key];
      if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 0))
        return `${option}.${key} must be a non-negative integer, got ${JSON.stringify(value)}`;
    }
  }
  if (route.mediaTypes !== undefined) {
    if (kind !== 'raw' && kind !== 'stream') return `mediaTypes applies to a raw or stream body, and this route's body is ${kind}`;
    const bad = Array.isArray(route.mediaTypes) ? route.mediaTypes.find((t) => !isMediaType(t)) : route.mediaTypes;
    if (bad !== undefined) return `mediaTypes must be media types such as 'application/json' or 'text/*', got ${JSON.stringify(bad)}`;
  }
  const early = route.bodyBeforeMiddlewares;
  if (early !== undefined && typeof early !== 'boolean') return `bodyBeforeMiddlewares must be a boolean, got ${JSON.stringify(early)}`;
  if (early === true && (route.method === 'GET' || route.method === 'HEAD'))
    return `bodyBeforeMiddlewares applies to a route with a body, and a ${route.method} route reads none`;
  const validated = kind === 'json' || kind === 'form' || (kind === 'multipart' && route.multipart?.buffer === true);
  if (route.schema?.body !== undefined && !validated)
    return `schema.body validates json, form and buffered multipart (multipart.buffer: true) bodies, not a ${kind} body`;
  return undefined;
}
