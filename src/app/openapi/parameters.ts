import type { JsonSchema } from '../core/route.ts';
import type { DocumentedRoute } from '../core/route-schemas.ts';
import { PAGE_DEFAULTS } from '../pagination/page.ts';
import type { OpenApiParameter } from './openapi-types.ts';
import type { TemplateParam } from './route-path.ts';

/** OpenAPI ignores header parameters with these names (they have their own fields). */
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/**
 * The parameters of an operation: every path parameter of the template (typed
 * by `schema.params`, else a string), then `schema.querystring`,
 * `page`/`limit` for paginated routes, `schema.headers`, and `schema.cookies`.
 *
 * @example
 * parametersOf(route, [{ name: 'id', key: 'id' }]); // [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]
 */
export function parametersOf(route: DocumentedRoute, pathParams: readonly TemplateParam[]): OpenApiParameter[] {
  const declared = propertiesOf(route.schema?.params);
  const parameters: OpenApiParameter[] = pathParams.map((p) => {
    const schema = declared.properties[p.key] ?? declared.properties[p.name] ?? fallbackSchema(p);
    return parameter(p.name, 'path', true, schema);
  });
  const query = fromObjectSchema(route.schema?.querystring, 'query');
  parameters.push(...query);
  if (route.paginated !== undefined) {
    const names = new Set(query.map((q) => q.name));
    parameters.push(...PAGE_PARAMETERS.filter((p) => !names.has(p.name)));
  }
  parameters.push(...fromObjectSchema(route.schema?.headers, 'header').filter((h) => !RESERVED_HEADERS.has(h.name.toLowerCase())));
  parameters.push(...fromObjectSchema(route.schema?.cookies, 'cookie'));
  return parameters;
}

const PAGE_PARAMETERS: readonly OpenApiParameter[] = [
  {
    name: 'page',
    in: 'query',
    required: false,
    description: 'Page number, 1-based.',
    schema: { type: 'integer', minimum: 1, default: PAGE_DEFAULTS.page },
  },
  {
    name: 'limit',
    in: 'query',
    required: false,
    // no `maximum`: a larger value is valid, and served with the largest page (a validating client must not refuse it)
    description: `Items per page, at most ${PAGE_DEFAULTS.maxLimit}: a larger value is reduced to ${PAGE_DEFAULTS.maxLimit} (the page's \`limit\` says which was used).`,
    schema: { type: 'integer', minimum: 1, default: PAGE_DEFAULTS.limit },
  },
];

function fallbackSchema(p: TemplateParam): JsonSchema {
  return p.pattern === undefined ? { type: 'string' } : { type: 'string', pattern: p.pattern };
}

function fromObjectSchema(schema: JsonSchema | undefined, location: 'query' | 'header' | 'cookie'): OpenApiParameter[] {
  const { properties, required } = propertiesOf(schema);
  return Object.entries(properties).map(([name, property]) => parameter(name, location, required.has(name), property));
}

/** A parameter object; the property's `description` and `deprecated` also describe the parameter. */
function parameter(name: string, location: OpenApiParameter['in'], required: boolean, schema: JsonSchema): OpenApiParameter {
  const p: OpenApiParameter = { name, in: location, required, schema };
  if (typeof schema['description'] === 'string') p.description = schema['description'];
  if (schema['deprecated'] === true) p.deprecated = true;
  return p;
}

/** The `properties` and `required` of an object schema; empty for anything else. */
function propertiesOf(schema: JsonSchema | undefined): { properties: Record<string, JsonSchema>; required: Set<string> } {
  const properties: Record<string, JsonSchema> = {};
  const raw = schema?.['properties'];
  if (isObject(raw)) {
    for (const [name, value] of Object.entries(raw)) properties[name] = isObject(value) ? value : {};
  }
  const req = schema?.['required'];
  return { properties, required: new Set(Array.isArray(req) ? req.filter((r) => typeof r === 'string') : []) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
