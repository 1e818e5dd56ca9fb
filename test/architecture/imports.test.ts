import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { cyclesOf, folderOf, type ImportGraph, importGraph, importsOf } from '../helpers/import-graph.ts';

// The rules ARCHITECTURE.md states about imports ("The folders of src/ and their imports", "The App's
// face"), each one executable, and each shown to fail on a planted violation.

const SRC = resolve(import.meta.dirname, '../../src');

/**
 * Which top-level folders of src/ each folder must not import (ARCHITECTURE.md, "Processes and threads").
 * `i18n` (the App's translations) stands on `errors` and `utils` alone.
 */
const FORBIDDEN: Record<string, readonly string[]> = {
  app: ['primary', 'worker', 'cli', 'ipc', 'process'],
  worker: ['primary', 'cli'],
  primary: ['worker', 'cli'],
  ipc: ['app', 'primary', 'worker', 'cli', 'config'],
  config: ['app', 'primary', 'worker', 'cli', 'ipc', 'process', 'coordination'],
  process: ['app', 'primary', 'worker', 'cli', 'i18n'],
  errors: ['app', 'primary', 'worker', 'cli'],
  metrics: ['app', 'primary', 'worker', 'cli'],
  scheduler: ['app', 'primary', 'worker', 'cli'],
  coordination: ['app', 'primary', 'worker', 'cli', 'ipc', 'process'],
  migrations: ['app', 'primary', 'worker', 'cli', 'ipc', 'process', 'config', 'coordination'],
  i18n: ['app', 'primary', 'worker', 'cli', 'ipc', 'config', 'process', 'coordination', 'metrics', 'scheduler', 'migrations'],
  utils: ['app', 'primary', 'worker', 'cli', 'ipc', 'config', 'process', 'coordination', 'errors', 'metrics', 'scheduler', 'i18n'],
};

/** Who may import `src/i18n/`: the App, whose `ctx.t` and problems it translates, and the services' face. */
const I18N_IMPORTERS = ['app', '(root)'];

/**
 * The App's face for flotilla's own hosts (ARCHITECTURE.md, "The App's face"): the only files of
 * `src/app/`, and of `src/index.ts` (the services' face), that `src/primary/` and `src/worker/` import.
 */
const FACE = ['app/index.ts', 'app/light-face.ts'];
const HOSTS = ['primary', 'worker'];

/**
 * The folders of src/app/ around its core (ARCHITECTURE.md, "The folders of src/ and their imports"). The core's parts are
 * what the core is built from: it imports them, they import nothing of it. The features plug into the
 * core: they read its types only, and the core knows none of them. The facade (the files at the root
 * of src/app/: `app.ts`, `define-service.ts`, `app-options.ts`, `pipeline-host.ts`, `service-part.ts`, and
 * the face, `index.ts` and `light-face.ts`) wires them together. A new folder must take a side here.
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

/** An import that crosses from a top-level folder into one that it must not import. */
function forbiddenEdges(g: ImportGraph): string[] {
  return edges(g, (file, { to }) => (FORBIDDEN[top(file)] ?? []).includes(top(to)));
}

/** An import of `src/i18n/` from outside the App and the services' face. */
function i18nImports(g: ImportGraph): string[] {
  return edges(g, (file, { to }) => top(to) === 'i18n' && top(file) !== 'i18n' && !I18N_IMPORTERS.includes(top(file)));
}

/** An import by a host of a file of `src/app/`, or of `src/index.ts`, that is not its face, types included. */
function pastTheFace(g: ImportGraph): string[] {
  return edges(g, (file, { to }) => HOSTS.includes(top(file)) && (top(to) === 'app' || to === 'index.ts') && !FACE.includes(to));
}

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
    t.assert.deepStrictEqual(forbiddenEdges(graph), []);
  });

  test('every top-level folder of src/ has its rule, and every rule names a folder', (t: TestContext) => {
    const folders = new Set([...graph.keys()].map(top).filter((f) => f !== '(root)'));
    const named = new Set([...Object.keys(FORBIDDEN), ...Object.values(FORBIDDEN).flat(), ...I18N_IMPORTERS, ...HOSTS]);
    const ruled = new Set([...Object.keys(FORBIDDEN), 'cli']); // cli/ is the composition root: it may import anything
    t.assert.deepStrictEqual(
      [...folders].filter((f) => !ruled.has(f)),
      [],
    );
    t.assert.deepStrictEqual(
      [...named].filter((f) => f !== '(root)' && !folders.has(f)),
      [],
    );
  });

  test("src/i18n imports only errors and utils, and only the App and the services' face import it", (t: TestContext) => {
    t.assert.deepStrictEqual(i18nImports(graph), []);
  });

  test("the hosts import src/app (and src/index.ts) only through the App's face, at most two files", (t: TestContext) => {
    t.assert.ok(FACE.length <= 2);
    t.assert.deepStrictEqual(
      FACE.filter((file) => !graph.has(file)),
      [],
    );
    t.assert.deepStrictEqual(pastTheFace(graph), []);
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

/** The import graph of `files` (path → source), written under a temporary root that the test removes. */
function plantedGraph(t: TestContext, files: Record<string, string>): ImportGraph {
  const root = mkdtempSync(join(tmpdir(), 'flotilla-imports-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return importGraph(root);
}

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
    const planted = plantedGraph(t, {
      'app/core/ctx.ts': "import type { Socket } from '../websocket/hub.ts';\nexport class Ctx { socket?: Socket }\n",
      'app/websocket/hub.ts': "import type { Ctx } from '../core/ctx.ts';\nexport interface Socket { ctx: Ctx }\n",
      'app/websocket/route.ts': "import type { Socket } from './hub.ts';\nexport type Route = Socket;\n",
    });
    t.assert.deepStrictEqual(fileCycles(planted), ['app/core/ctx.ts → app/websocket/hub.ts → app/core/ctx.ts']);
    t.assert.deepStrictEqual(folderCycles(planted), ['app/core → app/websocket → app/core']);
  });

  test("finds a host importing past the App's face, types included, and lets the face through", (t: TestContext) => {
    const planted = plantedGraph(t, {
      'app/index.ts': "export { App } from './app.ts';\n",
      'app/app.ts': 'export class App {}\n',
      'app/core/router.ts': 'export class Router {}\n',
      'index.ts': "export { App } from './app/app.ts';\n",
      'worker/worker-main.ts': "import { App } from '../app/index.ts';\nimport type { Router } from '../app/core/router.ts';\n",
      'primary/primary.ts': "import { App } from '../index.ts';\n",
    });
    t.assert.deepStrictEqual(pastTheFace(planted), [
      'primary/primary.ts imports index.ts',
      'worker/worker-main.ts imports app/core/router.ts (types)',
    ]);
  });

  test('finds src/i18n importing what is above it, and a host importing src/i18n', (t: TestContext) => {
    const planted = plantedGraph(t, {
      'i18n/translator.ts': "import type { ResolvedConfig } from '../config/types.ts';\nexport type Locale = ResolvedConfig;\n",
      'config/types.ts': 'export interface ResolvedConfig {}\n',
      'app/core/ctx.ts': "import type { Locale } from '../../i18n/translator.ts';\n",
      'primary/primary.ts': "import type { Locale } from '../i18n/translator.ts';\n",
    });
    t.assert.deepStrictEqual(forbiddenEdges(planted), ['i18n/translator.ts imports config/types.ts (types)']);
    t.assert.deepStrictEqual(i18nImports(planted), ['primary/primary.ts imports i18n/translator.ts (types)']);
  });
});
