import type { OpenApiDocument } from './openapi-types.ts';

const PREFIX = '#/components/schemas/';

/**
 * Removes the component schemas that nothing in the document's paths refers to, directly or
 * through another component (the `Problem` schema of a document without operations): linters
 * flag an unused component, and it documents nothing.
 *
 * @example
 * pruneSchemas(doc); // doc.components.schemas keeps Problem and ValidationIssue when an operation answers a problem
 */
export function pruneSchemas(doc: OpenApiDocument): void {
  const schemas = doc.components.schemas;
  const used = new Set<string>();
  const pending: unknown[] = [doc.paths];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(PREFIX)) {
        const name = inner.slice(PREFIX.length);
        if (!used.has(name) && Object.hasOwn(schemas, name)) {
          used.add(name);
          pending.push(schemas[name]);
        }
      } else pending.push(inner);
    }
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}
