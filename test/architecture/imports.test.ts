import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { cyclesOf, folderOf, type ImportGraph, importGraph, importsOf } from '../helpers/import-graph.ts';

// The rules ARCHITECTURE.md states about imports ("The folders of src/"), each one executable.

const SRC = resolve(import.meta.dirname, '../../src');

/** Which top-level folders of src/ each folder must not import (ARCHITECTURE.md, "Processes and threads"). */
const FORBIDDEN: Record<string, readonly string[]> = {
  app: ['primary', 'worker', 'cli', 'ipc', 'process'],
  worker: ['primary', 'cli'],
  primary: ['worker', 'cli'],
  ipc: ['app', 'primary', 'worker', 'cli', 'config'],
  config: ['app', 'primary', 'worker', 'cli', 'ipc', 'process', 'coordination'],
  cluster: ['primary', 'worker', 'cli'],
  errors: ['app', 'primary', 'worker', 'cli'],
  metrics: ['app', 'primary', 'worker', 'cli'],
  scheduler: ['app', 'primary', 'worker', 'cli'],
  coordination: ['app', 'primary', 'worker', 'cli', 'ipc', 'process'],
  migrations: ['app', 'primary', 'worker', 'cli', 'ipc', 'process', 'config', 'coordination'],
  utils: ['app', 'primary', 'worker', 'cli', 'ipc', 'config', 'process', 'coordination', 'errors', 'metrics', 'scheduler', 'i18n'],
};

/**
 * The folders of src/app/ around its core (ARCHITECTURE.md, "Inside src/app"). The core's parts are
 * what the core is built from: it imports them, they import nothing of it. The features plug into the
 * core: they read its types only, and the core knows none of them. The facade (the files at the root
 * of src/app/: `app.ts`, `define-service.ts`, `app-options.ts`, `pipeline-host.ts`) wires them together. A new folder must take a side here.
 */
const CORE_PARTS = [
  'app/bodies',
  'app/compression',
  'app/cookies',
  'app/headers',
  'app/lifecycle',
  'app/observability',
  'app/overload',
  'app/pagination',
  'app/sessions',
  'app/streams',
  'app/transport',
];
const FEATURES = ['app/auth', 'app/connect', 'app/health', 'app/openapi', 'app/rate-limit', 'app/static', 'app/typed', 'app/websocket'];

const graph = importGraph(SRC);
const top = (file: string): string => (file.includes('/') ? (file.split('/')[0] as string) : '(root)');

function edges(from: ImportGraph, accept: (file: string, edge: { to: string; typeOnly: boolean }) => boolean): string[] {
  const found: string[] = [];
  for (const [file, list] of from)
    for (const edge of list) if (accept(file, edge)) found.push(`${file} imports ${edge.to}${edge.typeOnly ? ' (types)' : ''}`);
  return found;
}

function fileCycles(g: ImportGraph): string[] {
  const next = (file: string) => (g.get(file) ?? []).map((e) => e.to).filter((to) => g.has(to));
  return cyclesOf(g.keys(), next).map((cycle) => cycle.join(' → '));
}

function folderCycles(g: ImportGraph): string[] {
  const between = new Map<string, Set<string>>();
  for (const [file, list] of g) {
    const from = folderOf(file);
    const set = between.get(from) ?? new Set<string>();
    for (const { to } of list) if (g.has(to) && folderOf(to) !== from) set.add(folderOf(to));
    between.set(from, set);
  }
  return cyclesOf(between.keys(), (f) => between.get(f) ?? []).map((cycle) => cycle.join(' → '));
}

describe('the imports of src/', () => {
  test('the top-level folders import each other only as the architecture allows', (t: TestContext) => {
    t.assert.deepStrictEqual(
      edges(graph, (file, { to }) => (FORBIDDEN[top(file)] ?? []).includes(top(to))),
      [],
    );
  });

  test('no import cycle between files, type-only imports included', (t: TestContext) => {
    t.assert.deepStrictEqual(fileCycles(graph), []);
  });

  test('no import cycle between folders (src/app/<folder> counting as one each), type-only imports included', (t: TestContext) => {
    t.assert.deepStrictEqual(folderCycles(graph), []);
  });

  test('every folder of src/app is the core, one of its parts, or a feature', (t: TestContext) => {
    const folders = new Set([...graph.keys()].map(folderOf).filter((f) => f.startsWith('app/')));
    const known = new Set(['app/core', ...CORE_PARTS, ...FEATURES]);
    t.assert.deepStrictEqual(
      [...folders].filter((f) => !known.has(f)),
      [],
    );
  });

  test("the core's parts import nothing of the core, the features only its types", (t: TestContext) => {
    const wrong = edges(graph, (file, { to, typeOnly }) => {
      if (folderOf(to) !== 'app/core') return false;
      if (CORE_PARTS.includes(folderOf(file))) return true;
      return FEATURES.includes(folderOf(file)) && !typeOnly;
    });
    t.assert.deepStrictEqual(wrong, []);
  });

  test('the core imports no feature and not the facade', (t: TestContext) => {
    const wrong = edges(
      graph,
      (file, { to }) => folderOf(file) === 'app/core' && (FEATURES.includes(folderOf(to)) || folderOf(to) === 'app'),
    );
    t.assert.deepStrictEqual(wrong, []);
  });
});

describe('the import graph the rules read', () => {
  test('tells type-only imports from the others', (t: TestContext) => {
    const source = [
      "import type { A } from './a.ts';",
      "import { type B, type C } from './b.ts';",
      "import { type D, e } from './d.ts';",
      'import {',
      '  type F,',
      '  type G,',
      "} from './f.ts';",
      "export type { H } from './h.ts';",
      "export { i } from './i.ts';",
      "import './side-effect.ts';",
      "const j = await import('./j.ts');",
      "import { k } from 'node:k';",
      "/** import { l } from './in-a-comment.ts'; */",
    ].join('\n');
    t.assert.deepStrictEqual(importsOf(source), [
      { specifier: './a.ts', typeOnly: true },
      { specifier: './b.ts', typeOnly: true },
      { specifier: './d.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: true },
      { specifier: './h.ts', typeOnly: true },
      { specifier: './i.ts', typeOnly: false },
      { specifier: './side-effect.ts', typeOnly: false },
      { specifier: './j.ts', typeOnly: false },
    ]);
  });

  test('finds a planted cycle, of types only, between files and between their folders', (t: TestContext) => {
    const root = mkdtempSync(join(tmpdir(), 'flotilla-imports-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const plant = (file: string, text: string) => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    plant('app/core/ctx.ts', "import type { Socket } from '../websocket/hub.ts';\nexport class Ctx { socket?: Socket }\n");
    plant('app/websocket/hub.ts', "import type { Ctx } from '../core/ctx.ts';\nexport interface Socket { ctx: Ctx }\n");
    plant('app/websocket/route.ts', "import type { Socket } from './hub.ts';\nexport type Route = Socket;\n");
    const planted = importGraph(root);
    t.assert.deepStrictEqual(fileCycles(planted), ['app/core/ctx.ts → app/websocket/hub.ts → app/core/ctx.ts']);
    t.assert.deepStrictEqual(folderCycles(planted), ['app/core → app/websocket → app/core']);
  });
});
