import type { Document, Node, Pair, YAMLMap, YAMLSeq } from 'yaml';
import { yaml } from './yaml-lib.ts';

/** A key path into the config, as in `ConfigProblem.path`. */
export type KeyPath = (string | number)[];

/** A problem found in a YAML document, located by key path and source offset. */
export interface LocatedProblem {
  path: KeyPath;
  offset: number;
  message: string;
}

/**
 * The key path of a node from its ancestry (as `visit` passes it).
 *
 * @example
 * visit(doc, { Scalar(_k, node, ancestry) { pathOfAncestry(ancestry, node) } }); // ['docs', 'servers', 0]
 */
export function pathOfAncestry(ancestry: readonly unknown[], node: unknown): KeyPath {
  const path: KeyPath = [];
  for (const [i, item] of ancestry.entries()) {
    const child = ancestry[i + 1] ?? node;
    if (yaml().isPair(item)) path.push(keyText(item));
    else if (yaml().isSeq(item)) path.push(indexIn(item, child));
  }
  return path;
}

const positions = new WeakMap<YAMLSeq, Map<unknown, number>>();

/** The index of an item in a sequence, from an index built once per sequence: no scan per problem. */
function indexIn(seq: YAMLSeq, item: unknown): number {
  let index = positions.get(seq);
  if (index === undefined) {
    index = new Map();
    for (const [i, each] of seq.items.entries()) if (!index.has(each)) index.set(each, i);
    positions.set(seq, index);
  }
  return index.get(item) ?? -1;
}

/** The text of a pair's key (keys are strings: the document is parsed with `stringKeys`). */
export function keyText(pair: Pair): string {
  return yaml().isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

/**
 * The source offset of the node at `path`: for a map entry its key, for a
 * sequence item the item. When the path leads nowhere (an unknown key that is
 * not there, a missing required key), the offset of the nearest existing
 * parent. Aliases along the path are followed.
 *
 * @example
 * lineCounter.linePos(offsetOfPath(doc, ['docs', 'title'])).line
 */
export function offsetOfPath(doc: Document, path: readonly (string | number)[]): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const segment of path) {
    if (yaml().isAlias(node)) node = node.resolve(doc);
    let next: { at: number | undefined; node: unknown } | undefined;
    if (yaml().isMap(node)) {
      const pair = pairsByKey(node).get(String(segment));
      if (pair !== undefined) next = { at: rangeStart(pair.key) ?? rangeStart(pair.value), node: pair.value };
    } else if (yaml().isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (item !== undefined) next = { at: rangeStart(item), node: item };
    }
    if (next === undefined) break;
    offset = next.at ?? offset;
    node = next.node;
  }
  return offset;
}

/**
 * The key path of the innermost map entry or sequence item whose source
 * contains `offset` (used to name the key of a YAML syntax error).
 *
 * @example
 * pathAtOffset(doc, error.pos[0]); // ['docs', 'title'] for a duplicate `title:`
 */
export function pathAtOffset(doc: Document, offset: number): KeyPath {
  const path: KeyPath = [];
  let node: unknown = doc.contents;
  for (;;) {
    if (yaml().isMap(node)) {
      const pair = node.items.find((p) => contains(p.key, offset) || contains(p.value, offset));
      if (pair === undefined) break;
      path.push(keyText(pair));
      if (contains(pair.key, offset)) break;
      node = pair.value;
    } else if (yaml().isSeq(node)) {
      const index = node.items.findIndex((item) => contains(item, offset));
      if (index === -1) break;
      path.push(index);
      node = node.items[index];
    } else break;
  }
  return path;
}

const indexes = new WeakMap<YAMLMap, Map<string, Pair>>();

/** A map's pairs by key, built once per map: lookups stay linear in the number of problems. */
function pairsByKey(map: YAMLMap): Map<string, Pair> {
  let index = indexes.get(map);
  if (index === undefined) {
    index = new Map();
    for (const pair of map.items) if (!index.has(keyText(pair))) index.set(keyText(pair), pair);
    indexes.set(map, index);
  }
  return index;
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | null | undefined)?.range?.[0];
}

function contains(node: unknown, offset: number): boolean {
  const range = (node as Node | null | undefined)?.range;
  return range !== undefined && range !== null && range[0] <= offset && offset < range[2];
}
