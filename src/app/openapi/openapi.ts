import { checkSecurity } from '../../config/security-requirements.ts';
import type { ResolvedConfig } from '../../config/types.ts';
import type { DocumentedRoute } from '../core/route-schemas.ts';
import { hoistDefs } from './hoist-defs.ts';
import type { OpenApiDocument, OpenApiMethod, OpenApiOperation, OpenApiParameter, OpenApiPathItem } from './openapi-types.ts';
import { parametersOf } from './parameters.ts';
import type { ProblemContext } from './problem-responses.ts';
import { PROBLEM_SCHEMA, VALIDATION_ISSUE_SCHEMA } from './problem-schema.ts';
import { pruneSchemas } from './prune-schemas.ts';
import { requestBodyOf, responsesOf } from './responses.ts';
import { operationIdOf, toPathTemplates } from './route-path.ts';

export type { OpenApiDocument } from './openapi-types.ts';

/**
 * Builds the OpenAPI 3.1.0 document of an App from its resolved config
 * (`docs.*`) and its routes, in registration order. Pure: the result shares no
 * object with its inputs. Hidden routes are left out, and so are HEAD routes
 * whose path also has a GET route. The config's security schemes are its
 * `components.securitySchemes`, `docs.security` its default `security`, and a
 * route's `security` its operation's; one that names an undeclared scheme throws
 * `FLO_ERR_BAD_SECURITY`. A route a `jwtAuth` hook guards requires the bearer scheme unless it says
 * otherwise. Each operation documents the problems flotilla answers it with (its 401 and 403, 413,
 * 415, 429, 503…: see problem-responses.ts) and those its route declares (`problems`). Component
 * schemas no operation refers to are left out.
 *
 * @example
 * const doc = buildOpenApi(resolveConfig({ docs: { title: 'Books' } }), routes);
 * doc.paths['/books/{id}']?.get?.responses['404']; // a problem+json response
 */
export function buildOpenApi(config: ResolvedConfig, routes: readonly DocumentedRoute[]): OpenApiDocument {
  const docs = config.docs;
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: docs.title, version: docs.version },
    paths: {},
    components: { schemas: { Problem: PROBLEM_SCHEMA, ValidationIssue: VALIDATION_ISSUE_SCHEMA } },
  };
  if (docs.description !== undefined) doc.info.description = docs.description;
  if (docs.contact !== undefined) doc.info.contact = { ...docs.contact };
  if (docs.license !== undefined) doc.info.license = { ...docs.license };
  if (docs.servers.length > 0) doc.servers = docs.servers.map(parseServer);
  if (docs.tags.length > 0) doc.tags = docs.tags.map((t) => ({ ...t }));
  const schemes = docs.securitySchemes;
  if (Object.keys(schemes).length > 0) doc.components.securitySchemes = { ...schemes };
  if (docs.security !== undefined) {
    checkSecurity(docs.security, schemes, 'docs.security');
    doc.security = [...docs.security];
  }

  const bearer = bearerSchemeOf(doc, schemes);
  const context: ProblemContext = {
    csrf: config.csrf.enabled,
    security: docs.security,
    bodyBytes: config.limits.bodyBytes,
    handlerMs: config.timeouts.handlerMs,
  };
  const getPaths = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.path));
  const operationIds = new Set<string>();
  for (const route of routes) {
    if (route.hide === true || (route.method === 'HEAD' && getPaths.has(route.path))) continue;
    // the App refused it at registration already; routes handed in directly are checked here
    if (route.security !== undefined) checkSecurity(route.security, schemes, `route ${route.method} ${route.path}`);
    for (const { template, params } of toPathTemplates(route.path)) {
      const method = route.method.toLowerCase() as OpenApiMethod;
      const id = unique(route.operationId ?? operationIdOf(method, template), operationIds);
      const item: OpenApiPathItem = doc.paths[template] ?? {};
      item[method] = operation(route, id, parametersOf(route, params), bearer, context);
      doc.paths[template] = item;
    }
  }
  // a copy first: the document shares no object with the routes, and the hoisting rewrites what it moves
  const copy = JSON.parse(JSON.stringify(doc)) as OpenApiDocument;
  hoistDefs(copy);
  pruneSchemas(copy);
  return copy;
}

/**
 * Parses a `docs.servers` entry: `"<url> - <description>"`, the description optional.
 *
 * @example
 * parseServer('https://api.example.com - Production'); // { url: 'https://api.example.com', description: 'Production' }
 */
export function parseServer(entry: string): { url: string; description?: string } {
  const at = entry.indexOf(' - ');
  if (at === -1) return { url: entry.trim() };
  const description = entry.slice(at + 3).trim();
  const url = entry.slice(0, at).trim();
  return description === '' ? { url } : { url, description };
}

/**
 * The bearer scheme the routes a `jwtAuth` hook guards require: one the config declares
 * (`type: http`, `scheme: bearer`), else `bearerAuth`, added to the document when a route uses it.
 */
function bearerSchemeOf(doc: OpenApiDocument, schemes: ResolvedConfig['docs']['securitySchemes']): () => string {
  const declared = Object.entries(schemes).find(([, s]) => s.type === 'http' && s.scheme.toLowerCase() === 'bearer')?.[0];
  return () => {
    if (declared !== undefined) return declared;
    doc.components.securitySchemes ??= {};
    doc.components.securitySchemes[BEARER_SCHEME] ??= { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
    return BEARER_SCHEME;
  };
}

const BEARER_SCHEME = 'bearerAuth';

function operation(
  route: DocumentedRoute,
  operationId: string,
  parameters: OpenApiParameter[],
  bearer: () => string,
  context: ProblemContext,
): OpenApiOperation {
  const op: OpenApiOperation = { operationId, responses: {} };
  if (route.summary !== undefined) op.summary = route.summary;
  if (route.description !== undefined) op.description = route.description;
  if (route.tags !== undefined && route.tags.length > 0) op.tags = [...route.tags];
  if (route.deprecated === true) op.deprecated = true;
  if (parameters.length > 0) op.parameters = parameters;
  const requestBody = requestBodyOf(route);
  if (requestBody !== undefined) op.requestBody = requestBody;
  op.responses = responsesOf(route, context);
  if (route.security !== undefined) op.security = route.security.map((requirement) => ({ ...requirement }));
  else if (route.guards?.some((g) => g.bearer)) op.security = [{ [bearer()]: [] }];
  if (route.websocket !== undefined) op['x-websocket'] = { protocols: [...(route.protocols ?? [])] };
  return op;
}

/** Operation ids must be unique in a document: a repeated one gets a numeric suffix (`getBooks2`). */
function unique(id: string, taken: Set<string>): string {
  let candidate = id;
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}${n}`;
  taken.add(candidate);
  return candidate;
}
