import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { defaultsOf } from '../../src/config/defaults.ts';
import { CONFIG_SCHEMA } from '../../src/config/schema.ts';
import { App } from '../../src/index.ts';
import { sink } from '../helpers/sink.ts';

// The README's walk-through must work as printed: its service and YAML blocks are run here.
const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Your first service'), readme.indexOf('## Configuration'));
const block = (lang: string) => {
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(match, `a ${lang} block in the walk-through`);
  return match[1]!;
};
// Inside the repository, so that `import … from 'flotilla'` resolves to this package (self-reference).
const dir = mkdtempSync(join(root, 'test', '.readme-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'service.ts'), block('ts'));
writeFileSync(join(dir, 'app.yaml'), block('yaml'));

test('the walk-through service answers as described', async () => {
  const { default: setup } = (await import(pathToFileURL(join(dir, 'service.ts')).href)) as { default: (app: App) => void };
  const app = new App({ port: 0 }, { logStream: sink(), handleSignals: false });
  setup(app);
  const list = await app.inject('/books?page=1&limit=1');
  assert.deepEqual(list.json(), { data: [{ id: 1, title: 'The Dispossessed' }], total: 2, page: 1, limit: 1, total_pages: 2 });
  assert.equal((await app.inject('/books/2')).json().title, 'Invisible Cities');
  const missing = await app.inject('/books/9');
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().detail, 'no such book');
  assert.equal((await app.inject('/health')).statusCode, 200);
  await app.close();
});

test('the walk-through YAML is valid and `flotilla openapi` documents the routes', () => {
  const out = execFileSync(
    process.execPath,
    ['--conditions=source', join(root, 'src/cli/main.ts'), 'openapi', '--config', join(dir, 'app.yaml')],
    {
      encoding: 'utf8',
    },
  );
  const doc = JSON.parse(out) as { paths: Record<string, unknown> };
  assert.ok('/books' in doc.paths && '/books/{id}' in doc.paths);
});

const configTable = readme.slice(readme.indexOf('## Configuration (YAML)'), readme.indexOf('## API in short'));

test('the configuration table lists every key of the schema', () => {
  const cells = [...configTable.matchAll(/^\| (.+?) \|/gm)].map((m) => m[1]!);
  // a key and its children, down to the second level (`docs.contact` is one row, its fields are in the row)
  const keys: string[][] = [];
  for (const [key, schema] of Object.entries(CONFIG_SCHEMA.properties)) {
    const children = (schema as { properties?: Record<string, unknown> }).properties;
    if (children === undefined) keys.push([key]);
    else for (const child of Object.keys(children)) keys.push([key, child]);
  }
  // a row names `a.b`, or `a.x` followed by `b` (`metrics.port` / `host` / `path`)
  const listed = ([a, b]: string[]) =>
    cells.some((cell) =>
      b === undefined
        ? cell.includes(`\`${a}\``)
        : cell.includes(`\`${a}.${b}\``) || (cell.includes(`\`${a}.`) && cell.includes(`\`${b}\``)),
    );
  assert.deepEqual(
    keys.filter((k) => !listed(k)).map((k) => k.join('.')),
    [],
  );
});

/**
 * The rows of the configuration table as `[key, default cell]` pairs, one per key: a row names
 * `a.b`, or `a.x` / `b` / `c` (siblings), with as many defaults separated by ` / `, or one for all.
 */
function tableDefaults(): [key: string, cell: string][] {
  const rows = [...configTable.matchAll(/^\| `.+$/gm)].map((m) => m[0].split(/(?<!\\)\|/).map((c) => c.trim()));
  const out: [string, string][] = [];
  for (const row of rows) {
    const names = [...(row[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const [first = '', ...siblings] = names;
    const parent = first.includes('.') ? first.slice(0, first.lastIndexOf('.') + 1) : '';
    const keys = [first, ...siblings.map((s) => parent + s)];
    const cells = (row[3] ?? '').split(' / ');
    assert.ok(cells.length === keys.length || cells.length === 1, `${row[1]}: ${cells.length} defaults for ${keys.length} keys`);
    for (const [i, key] of keys.entries()) out.push([key, (cells.length === 1 ? cells[0] : cells[i])!]);
  }
  return out;
}

const UNREADABLE = Symbol('not `value` or —');

/** A default cell's value: `—` for none, else one `code` span (JSON, or a bare string), an explanation in parentheses may follow. */
function cellValue(cell: string): unknown {
  const text = cell.replace(/\s*\([^)]*\)$/, '');
  if (text === '—') return undefined;
  const code = /^`([^`]+)`$/.exec(text);
  if (code === null) return UNREADABLE;
  try {
    return JSON.parse(code[1]!);
  } catch {
    return code[1];
  }
}

test("the configuration table's default column shows the schema's defaults", () => {
  const schemaAt = (key: string) =>
    key
      .split('.')
      .reduce<unknown>((node, name) => (node as { properties?: Record<string, unknown> } | undefined)?.properties?.[name], CONFIG_SCHEMA);
  const rows = tableDefaults();
  assert.ok(rows.length >= 50, `${rows.length} keys in the table`);
  const wrong = rows
    .map(([key, cell]) => ({ key, schema: schemaAt(key), cell }))
    .filter(({ schema, cell }) => schema === undefined || !isDeepStrictEqual(cellValue(cell), defaultsOf(schema)))
    .map(({ key, schema, cell }) => {
      const readme = cellValue(cell) === UNREADABLE ? `${cell} (not \`value\` or —)` : cell;
      return `${key}: README ${readme}, schema ${schema === undefined ? 'has no such key' : JSON.stringify(defaultsOf(schema))}`;
    });
  assert.deepEqual(wrong, []);
});
