import { isRecord } from '../../utils/is-record.ts';
import type { OpenApiDocument } from './openapi-types.ts';

const COMPONENTS = '#/components/schemas/';

/**
 * Moves the `$defs` (and draft-07 `definitions`) of the schemas in the document's paths into
 * `components.schemas`, rewriting the `#/$defs/…` references under them. Inside an OpenAPI
 * document such a reference points at the document's root, not at the schema that declared it:
 * a schema library's recursive or shared types (Zod's `z.toJSONSchema`, say) would dangle. A
 * definition equal to a component of the same name is shared; another gets a numbered name.
 *
 * @example
 * hoistDefs(doc); // { $defs: { Node: … }, $ref: '#/$defs/Node' } → { $ref: '#/components/schemas/Node' }
 */
export function hoistDefs(doc: OpenApiDocument): void {
  const schemas = doc.components.schemas;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const entry of node) visit(entry);
      return;
    }
    if (!isRecord(node)) return;
    for (const key of ['$defs', 'definitions']) {
      const defs = node[key];
      if (!isRecord(defs)) continue;
      delete node[key];
      const renamed = new Map<string, string>();
      for (const [name, def] of Object.entries(defs))
        renamed.set(`#/${key}/${pointerToken(name)}`, `${COMPONENTS}${place(schemas, name, def)}`);
      rewrite(node, renamed);
      for (const target of renamed.values()) rewrite(schemas[target.slice(COMPONENTS.length)], renamed);
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(doc.paths);
}

/** The component name a definition takes: its own (made safe), numbered when another schema holds it. */
function place(schemas: Record<string, unknown>, name: string, def: unknown): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '_') || 'Schema';
  const text = JSON.stringify(def);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}_${n}`;
    if (!Object.hasOwn(schemas, candidate)) {
      schemas[candidate] = def;
      return candidate;
    }
    if (JSON.stringify(schemas[candidate]) === text) return candidate;
  }
}

function rewrite(node: unknown, renamed: Map<string, string>): void {
  if (Array.isArray(node)) {
    for (const entry of node) rewrite(entry, renamed);
    return;
  }
  if (!isRecord(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const hit = [...renamed].find(([from]) => value === from || value.startsWith(`${from}/`));
      if (hit !== undefined) node[key] = hit[1] + value.slice(hit[0].length);
    } else rewrite(value, renamed);
  }
}

function pointerToken(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
