import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { defaultsOf } from '../../src/config/defaults.ts';
import { CONFIG_SCHEMA } from '../../src/config/schema.ts';

// The configuration reference's table must list every key of the schema, each with its default.
const root = resolve(import.meta.dirname, '../..');
const reference = readFileSync(join(root, 'docs/reference/config.md'), 'utf8');

const configTable = reference.slice(reference.indexOf('## Keys'));

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
      const documented = cellValue(cell) === UNREADABLE ? `${cell} (not \`value\` or —)` : cell;
      return `${key}: docs ${documented}, schema ${schema === undefined ? 'has no such key' : JSON.stringify(defaultsOf(schema))}`;
    });
  assert.deepEqual(wrong, []);
});
