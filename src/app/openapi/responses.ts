import { type JsonSchema, statusKey } from '../../utils/json-schema.ts';
import { STATUS_CODES } from '../../utils/node-http.ts';
import { bodyMediaTypes } from '../bodies/index.ts';
import type { DocumentedRoute } from '../core/route-schemas.ts';
import { pageSchema } from '../pagination/page.ts';
import { upgradesOnly } from '../websocket/websocket-route.ts';
import type { OpenApiContent, OpenApiResponse } from './openapi-types.ts';
import { type ProblemContext, problemResponsesOf } from './problem-responses.ts';
import { problemResponse } from './problem-schema.ts';

/**
 * The responses of an operation: the route's `schema.response` as
 * `application/json` (a paginated route's 200 defaulting to the page
 * envelope, a 200 "OK" when no success response is declared), the problem
 * responses flotilla itself may answer with and those the route declares
 * (`problems`: see problem-responses.ts), and `default` (500). Declared
 * responses are never overridden.
 *
 * @example
 * responsesOf({ method: 'GET', path: '/', handler }, context); // { 200: { description: 'OK' }, 404: …, 503: …, default: … }
 */
export function responsesOf(route: DocumentedRoute, context: ProblemContext): Record<string, OpenApiResponse> {
  const responses: Record<string, OpenApiResponse> = {};
  for (const [key, schema] of Object.entries(route.schema?.response ?? {})) {
    const code = statusKey(key);
    if (code !== undefined) responses[code] = declared(code, schema);
  }
  if (route.paginated !== undefined) responses['200'] ??= declared('200', pageSchema(route.paginated.item));
  if (route.kind === 'sse')
    responses['200'] ??= { description: 'Server-sent events', content: { 'text/event-stream': { schema: { type: 'string' } } } };
  if (route.websocket !== undefined) {
    responses['101'] ??= { description: 'Switching Protocols: a WebSocket (see x-websocket)' };
    if (upgradesOnly(route))
      responses['426'] ??= problemResponse(
        'Upgrade Required: `UPGRADE_REQUIRED` (a WebSocket endpoint: open it with `Upgrade: websocket`)',
      );
  }
  if (!Object.keys(responses).some((code) => /^[123]/.test(code))) responses['200'] = { description: 'OK' };

  const body = requestBodyOf(route);
  const problems = problemResponsesOf(route, context, body && { mediaTypes: Object.keys(body.content) });
  for (const [code, response] of Object.entries(problems)) responses[code] ??= response;
  responses['default'] ??= problemResponse('Unexpected error (500 Internal Server Error)');
  return responses;
}

/** A declared response: a JSON Schema, or Fastify's `{ description, content: { <media type>: { schema } } }` form. */
function declared(code: string, schema: JsonSchema): OpenApiResponse {
  const description = typeof schema['description'] === 'string' ? schema['description'] : (STATUS_CODES[code] ?? 'Response');
  const content = schema['content'];
  if (isMediaTypeMap(content)) return { description, content };
  if (code === '204' || code === '304' || schema['type'] === 'null') return { description };
  return { description, content: { 'application/json': { schema } } };
}

function isMediaTypeMap(v: unknown): v is OpenApiContent {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const entries = Object.entries(v);
  return entries.length > 0 && entries.every(([type, media]) => type.includes('/') && typeof media === 'object' && media !== null);
}

/**
 * The request body a route documents: by its body kind's media types (`json`: only when `schema.body`
 * says what it holds). Forms and buffered multipart bodies carry `schema.body`; text is a string;
 * raw and stream bodies are bytes of the media types they accept.
 */
export function requestBodyOf(route: DocumentedRoute): { required: true; content: OpenApiContent } | undefined {
  const kind = route.body ?? 'json';
  const schema = route.schema?.body;
  if (kind === 'json' && schema === undefined) return undefined;
  const described: JsonSchema =
    schema ?? (kind === 'text' ? { type: 'string' } : kind === 'form' || kind === 'multipart' ? { type: 'object' } : {});
  const content: OpenApiContent = {};
  for (const type of bodyMediaTypes(kind, route.mediaTypes)) content[type] = { schema: described };
  return { required: true, content };
}
