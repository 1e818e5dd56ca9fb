import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One relative import of a source file: the file it names (relative to the root) and whether only types cross it. */
export interface ImportEdge {
  readonly to: string;
  readonly typeOnly: boolean;
  /** The specifier as written. */
  readonly specifier: string;
}

/** Every `.ts` file under `root` (paths relative to it, `/`-separated) and its relative imports. */
export type ImportGraph = ReadonlyMap<string, readonly ImportEdge[]>;

const COMMENTS = /\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm;
/** `import …/export … from '…'` (the clause stops at a quote or a semicolon: one statement), and a bare `import '…'`. */
const STATIC = /^\s*(import|export)\s+(type\s+)?([^'"`;]*?)\s*from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * The relative imports of a TypeScript source: type-only when written `import type`, `export type`, or
 * with every named binding marked `type`; `import('…')` loads at run time.
 */
export function importsOf(source: string): { specifier: string; typeOnly: boolean }[] {
  const code = source.replace(COMMENTS, '');
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const m of code.matchAll(STATIC)) {
    const specifier = m[4] ?? m[5] ?? '';
    const clause = (m[3] ?? '').trim();
    const named = /^\{([\s\S]*)\}$/.exec(clause)?.[1];
    const bindings = named
      ?.split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    const allTypes = bindings !== undefined && bindings.length > 0 && bindings.every((b) => b.startsWith('type '));
    found.push({ specifier, typeOnly: m[2] !== undefined || allTypes });
  }
  for (const m of code.matchAll(DYNAMIC)) found.push({ specifier: m[1] ?? '', typeOnly: false });
  return found.filter((i) => i.specifier.startsWith('.'));
}

/** The import graph of the `.ts` files under `root`. */
export function importGraph(root: string): ImportGraph {
  const graph = new Map<string, ImportEdge[]>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const edges = importsOf(readFileSync(path, 'utf8')).map(({ specifier, typeOnly }) => ({
          to: relative(root, resolve(dirname(path), specifier))
            .split('\\')
            .join('/'),
          typeOnly,
          specifier,
        }));
        graph.set(relative(root, path).split('\\').join('/'), edges);
      }
    }
  };
  walk(root);
  return graph;
}

/**
 * The cycles of a directed graph, one per strongly connected component of more than one node (or a
 * node that reaches itself), each as a path `a → b → … → a`, found by Tarjan's algorithm.
 */
export function cyclesOf(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || [...next(v)].includes(v)) components.push(component);
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return components.map((component) => pathThrough(component, next));
}

/** A closed path through a component: from its first node in sort order (stable reports), always to a neighbour inside it, until a node repeats. */
function pathThrough(component: readonly string[], next: (node: string) => Iterable<string>): string[] {
  const inside = new Set(component);
  const path = [[...component].sort()[0] as string];
  for (;;) {
    const here = path[path.length - 1] as string;
    const to = [...next(here)].find((n) => inside.has(n)) as string;
    const seen = path.indexOf(to);
    if (seen !== -1) return [...path.slice(seen), to];
    path.push(to);
  }
}

/**
 * The folder a source file belongs to for the architecture's rules: `src/app/<sub>/` is a folder of its
 * own (`app/core`, `app/websocket`…), the files directly in `src/app/` are `app` (the facade), other
 * top-level folders are one each, and a file directly in `src/` is `(root)`, but `entry-points.ts`:
 * the one module that locates flotilla's files (entry points, the lazily required validator), which
 * imports nothing, is `(entry-points)`, so that a folder locating a file through it is not one with
 * the services' face (`index.ts`).
 */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (file === 'entry-points.ts') return '(entry-points)';
  if (parts.length === 1) return '(root)';
  if (parts[0] === 'app' && parts.length > 2) return `app/${parts[1]}`;
  return parts[0] as string;
}
