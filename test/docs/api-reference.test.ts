import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type TestContext, test } from 'node:test';
import { API_REFERENCE, differences, filesUnder, generateApiReference } from '../../tools/api-reference.ts';

// The API reference cannot drift: every export of `flotilla` (src/index.ts, runtime values and types
// alike) must be documented in docs/reference/api.md, as a code span that starts with its name
// (`StartHook`, `defineService(setup)`, `new App(config?, options?)`, `PathParams<Path>`); and the
// pages TypeDoc generates from the declarations (docs/reference/api/, `npm run docs`) must be those the
// current src/ gives, one for each export.

const root = resolve(import.meta.dirname, '../..');
const INDEX = 'src/index.ts';
const REFERENCE = 'docs/reference/api.md';

interface Export {
  /** The name a user imports. */
  name: string;
  /** `export type { … }`, `type X` in a list, an interface or a type alias: nothing at run time. */
  type: boolean;
  line: number;
}

/** The source with its comments blanked out (line breaks kept, so that line numbers hold); strings kept. */
function withoutComments(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      i = end === -1 ? source.length : end;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      const comment = source.slice(i, end === -1 ? source.length : end + 2);
      out += comment.replace(/[^\n]/g, ' ');
      i += comment.length;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * The exports of a module's text: `export { a, type B, c as d } from '…'`, `export type { … }`, and
 * exported declarations (`export function f`, `export interface I`…). Any other form (`export *`,
 * `export default`) is returned in `unlisted`: its names cannot be read without resolving modules.
 */
function exportsOf(source: string): { exports: Export[]; unlisted: string[] } {
  const text = withoutComments(source);
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const exports: Export[] = [];
  const unlisted: string[] = [];
  for (const match of text.matchAll(/^export\b/gm)) {
    const at = match.index;
    const rest = text.slice(at);
    const list = /^export\s+(type\s+)?\{([^}]*)\}/.exec(rest);
    if (list !== null) {
      for (const item of list[2]!.split(',')) {
        const parts = item.trim().split(/\s+/);
        if (parts.length === 1 && parts[0] === '') continue; // a trailing comma
        const itemType = parts[0] === 'type';
        const names = itemType ? parts.slice(1) : parts;
        // `a`, `a as b`: the name imported is the last one
        const name = names.length === 3 && names[1] === 'as' ? names[2]! : names.length === 1 ? names[0]! : undefined;
        if (name === undefined || !/^[A-Za-z_$][\w$]*$/.test(name)) unlisted.push(`${INDEX}:${lineAt(at)}: ${item.trim()}`);
        else exports.push({ name, type: list[1] !== undefined || itemType, line: lineAt(at) });
      }
      continue;
    }
    const declaration =
      /^export\s+(?:declare\s+)?(?:(async\s+)?function\*?|(abstract\s+)?class|const\s+enum|const|let|var|enum|(interface|type))\s+([A-Za-z_$][\w$]*)/.exec(
        rest,
      );
    if (declaration !== null) {
      exports.push({ name: declaration[4]!, type: declaration[3] !== undefined, line: lineAt(at) });
      continue;
    }
    unlisted.push(`${INDEX}:${lineAt(at)}: ${rest.split('\n', 1)[0]}`);
  }
  return { exports, unlisted };
}

/** The code spans of a Markdown text, outside fenced blocks. */
function codeSpans(markdown: string): string[] {
  let fenced = false;
  const prose = markdown
    .split('\n')
    .filter((line) => {
      if (/^\s*(`{3,}|~{3,})/.test(line)) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    })
    .join('\n');
  return [...prose.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)].map((m) => m[2]!.trim());
}

/** The names no code span documents: none starts with the name (after an optional `new `) followed by a non-identifier character. */
function undocumented(names: readonly string[], markdown: string): string[] {
  const spans = codeSpans(markdown);
  return names.filter((name) => {
    const entry = new RegExp(`^(?:new\\s+)?${name.replace(/\$/g, '\\$')}(?![\\w$])`);
    return !spans.some((span) => entry.test(span));
  });
}

const index = exportsOf(readFileSync(join(root, INDEX), 'utf8'));

/** The names of the runtime exports (values: classes, functions, constants), sorted. */
const runtime = (): string[] =>
  index.exports
    .filter((e) => !e.type)
    .map((e) => e.name)
    .sort();

/** The names of the type-only exports (interfaces, type aliases, `export type`), sorted. */
const types = (): string[] =>
  index.exports
    .filter((e) => e.type)
    .map((e) => e.name)
    .sort();

test(`every export of ${INDEX} is read: no \`export *\` or default export hides names`, (t: TestContext) => {
  t.assert.deepStrictEqual(index.unlisted, []);
  const names = index.exports.map((e) => e.name);
  t.assert.deepStrictEqual(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'no name is exported twice',
  );
  t.assert.ok(index.exports.length >= 100, `${index.exports.length} exports`);
  t.diagnostic(`runtime exports (${index.exports.filter((e) => !e.type).length}): ${runtime().join(', ')}`);
  t.diagnostic(`type exports (${index.exports.filter((e) => e.type).length}): ${types().join(', ')}`);
});

test('the runtime exports read from the source are those the module has', async (t: TestContext) => {
  const module = (await import('../../src/index.ts')) as Record<string, unknown>;
  t.assert.deepStrictEqual(runtime(), Object.keys(module).sort());
});

test(`every export of flotilla is documented in ${REFERENCE}`, (t: TestContext) => {
  const reference = readFileSync(join(root, REFERENCE), 'utf8');
  const missing = undocumented(
    index.exports.map((e) => e.name),
    reference,
  ).map((name) => {
    const found = index.exports.find((e) => e.name === name)!;
    return `${name} (${found.type ? 'type' : 'value'}, ${INDEX}:${found.line})`;
  });
  t.assert.deepStrictEqual(missing, [], `exports missing from ${REFERENCE} (add a row, or a backticked name in one)`);
});

test(`the generated reference (${API_REFERENCE}/) is what the current src/ generates, a page for every export`, (t: TestContext) => {
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
  const out = mkdtempSync(join(root, 'node_modules/.cache/api-reference-check-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  generateApiReference(out);
  const generated = filesUnder(out);
  t.assert.deepStrictEqual(differences(generated, filesUnder(join(root, API_REFERENCE))), [], 'run `npm run docs`, and commit its pages');
  // the index of the pages links each export by its name
  const listed = new Set([...(generated.get('README.md') ?? '').matchAll(/^- \[([^\]]+)\]\(/gm)].map((m) => m[1]!.replace(/\\(.)/g, '$1')));
  t.assert.deepStrictEqual(
    index.exports.map((e) => e.name).filter((name) => !listed.has(name)),
    [],
    `exports without a page in ${API_REFERENCE}/README.md`,
  );
  t.assert.ok(readFileSync(join(root, REFERENCE), 'utf8').includes('](api/README.md)'), `${REFERENCE} links the generated pages`);
});

test('the checks catch what they are for', (t: TestContext) => {
  const planted = exportsOf(
    [
      "export { a, type B, c as d } from './x.ts';",
      '/** export { notAnExport } */',
      "export type {\n  E,\n  F,\n} from './y.ts';",
      'export interface G {}',
      'export async function h() {}',
      "export * from './z.ts';",
    ].join('\n'),
  );
  t.assert.deepStrictEqual(
    planted.exports.map((e) => `${e.type ? 'type ' : ''}${e.name}`),
    ['a', 'type B', 'd', 'type E', 'type F', 'type G', 'h'],
  );
  t.assert.strictEqual(planted.unlisted.length, 1, 'export * is reported');
  const markdown = '| `new App(config)` | `Page<T>` | `defineService(setup)` |\n\n```ts\n`Fenced`\n```\nApp and `Pages`';
  t.assert.deepStrictEqual(undocumented(['App', 'Page', 'defineService', 'Fenced', 'Pages', 'Pag', 'NoSuchExport'], markdown), [
    'Fenced',
    'Pag',
    'NoSuchExport',
  ]);
  const pages = new Map([
    ['README.md', '- [App](classes/App.md)'],
    ['classes/App.md', '# App'],
  ]);
  t.assert.deepStrictEqual(differences(pages, new Map([...pages, ['classes/Gone.md', '# Gone']])), [
    'classes/Gone.md: no longer generated',
  ]);
  t.assert.deepStrictEqual(differences(pages, new Map([['classes/App.md', '# App, edited by hand']])), [
    'README.md: missing',
    'classes/App.md: not what src/ generates',
  ]);
});
