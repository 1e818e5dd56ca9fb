// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfigText } from '../../src/config/load-file.ts';
import { cpuMs } from '../helpers/timing.ts';

/**
 * YAML config text, property-tested: any document — config-shaped or not,
 * with anchors, aliases, merge keys, tags, `${…}` expressions, prototype keys,
 * flow and block styles at any depth — is either a frozen config or a
 * ConfigError whose every problem names a key and a line of the file; nothing
 * else escapes the loader, nothing pollutes Object.prototype, and bombs fail
 * fast. (test/config/load-file.test.ts covers unstructured text.)
 */

const ENV = { PORT: '8080', EMPTY: '', NAME: 'books' };

const KEYS = [
  'serviceName',
  'port',
  'host',
  'env',
  'docs',
  'title',
  'servers',
  'tags',
  'name',
  'cors',
  'origins',
  'limits',
  'bodyBytes',
  'timeouts',
  'requestMs',
  'workers',
  'cluster',
  'metrics',
  'path',
  '<<',
  '__proto__',
  'constructor',
  'prototype',
  'polluted',
  'toString',
  '"quoted key"',
  "'single'",
  '${NAME}',
  '? explicit',
];
const SCALARS = [
  '1',
  '0',
  '-1',
  '3000',
  '65536',
  '1.5',
  '1e3',
  '0x1F',
  '0o17',
  '.inf',
  '.nan',
  'true',
  'false',
  'yes',
  'null',
  '~',
  '',
  'abc',
  'production',
  '"quoted"',
  "'single'",
  '"\\u0000"',
  '"\\x41"',
  '${PORT}',
  '${PORT:-3000}',
  '${EMPTY:-x}',
  '${MISSING}',
  '${1BAD}',
  '$${PORT}',
  '${',
  '"${PORT}"',
  '!!str 1',
  '!!int 1',
  '!!int x',
  '!!float 1',
  '!!binary aGk=',
  '!!js/function f',
  '!custom x',
  '! 1',
  '|\n  literal',
  '>-\n  folded',
  '- inline',
  '{a: 1',
  '[1, 2',
  '@reserved',
  '`reserved',
  '%directive',
  '# comment',
  'a: b',
  '&',
  '*',
  '*nowhere',
];

type Tree = { kind: 'scalar'; text: string } | { kind: 'alias' } | { kind: 'map' | 'seq' | 'flow'; items: [string, Tree][] };

const { node: tree } = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...SCALARS).map((text): Tree => ({ kind: 'scalar', text })),
    fc.constant<Tree>({ kind: 'alias' }),
    fc
      .record({
        kind: fc.constantFrom<'map' | 'seq' | 'flow'>('map', 'seq', 'flow'),
        items: fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('node')), { maxLength: 4 }),
      })
      .map((t): Tree => t),
  ),
}));

/** Mostly a top-level mapping, as a config file is; sometimes anything. */
const document = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(fc.tuple(fc.constantFrom(...KEYS), tree), { maxLength: 6 }).map((items): Tree => ({ kind: 'map', items })),
  },
  { weight: 1, arbitrary: tree },
);

/** Renders a tree as YAML; `anchors` decides which nodes get `&aN`, aliases point at earlier anchors (or nowhere). */
function render(root: Tree, anchors: boolean[]): string {
  let count = 0;
  let anchored = 0;
  const anchor = () => (anchors[count++ % Math.max(1, anchors.length)] ? `&a${anchored++} ` : '');
  const alias = () => (anchored === 0 ? '1' : `*a${count % anchored}`);
  const inline = (node: Tree): string => {
    if (node.kind === 'scalar') return `${anchor()}${node.text.includes('\n') ? JSON.stringify(node.text) : node.text}`;
    if (node.kind === 'alias') return alias();
    const inner = node.items.map(([key, value]) => (node.kind === 'seq' ? inline(value) : `${key}: ${inline(value)}`)).join(', ');
    return `${anchor()}${node.kind === 'seq' ? `[${inner}]` : `{${inner}}`}`;
  };
  const block = (node: Tree, indent: string): string => {
    if (node.kind !== 'map' && node.kind !== 'seq') return ` ${inline(node)}\n`;
    if (node.items.length === 0) return node.kind === 'map' ? ' {}\n' : ' []\n';
    const lines = node.items.map(([key, value]) => `${indent}${node.kind === 'seq' ? '-' : `${key}:`}${block(value, `${indent}  `)}`);
    return ` ${anchor()}\n${lines.join('')}`;
  };
  if (root.kind === 'map' || root.kind === 'seq') return block(root, '').replace(/^ (&a\d+ )?\n/, '');
  return `${inline(root)}\n`;
}

/** The loader's contract for one text: a frozen config, or a ConfigError locating every problem on a line of the file. */
function checkLoad(text: string): void {
  const lines = text.split('\n').length;
  let config: ReturnType<typeof parseConfigText> | undefined;
  try {
    config = parseConfigText(text, 'prop.yaml', ENV);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}\n--- text:\n${text}`);
    assert.ok(error.problems.length > 0);
    for (const p of error.problems) {
      assert.equal(p.file, 'prop.yaml');
      assert.ok(Number.isInteger(p.line) && (p.line ?? 0) >= 1 && (p.line ?? 0) <= lines, `line ${p.line} of ${lines}`);
      assert.equal(typeof p.key, 'string');
      assert.ok(typeof p.message === 'string' && p.message.length > 0);
      assert.ok(error.message.includes(`prop.yaml:${p.line}: `));
    }
    return;
  }
  assert.equal(typeof config.port, 'number');
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.docs));
}

test('any YAML document is a config or a precise ConfigError, and pollutes nothing', () => {
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  fc.assert(
    fc.property(document, fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }), (root, anchors) => {
      checkLoad(render(root, anchors));
    }),
    { numRuns: 400 },
  );
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
});

test('config-shaped documents with a few changes: still a config or a precise error', () => {
  const base = [
    'serviceName: books',
    'port: ${PORT:-3000}',
    'host: 127.0.0.1',
    'docs:',
    '  title: &t Books',
    '  servers: ["https://api.example - prod"]',
    '  tags: [{ name: *t }]',
    'limits: { bodyBytes: 1024 }',
    'workers: auto',
  ];
  const edit = fc.record({
    line: fc.nat({ max: base.length - 1 }),
    text: fc.oneof(fc.constantFrom(...SCALARS), fc.string({ maxLength: 12 })),
    where: fc.constantFrom('replace', 'append', 'insert', 'indent'),
  });
  fc.assert(
    fc.property(fc.array(edit, { maxLength: 3 }), (edits) => {
      const lines = [...base];
      for (const e of edits) {
        const at = Math.min(e.line, lines.length - 1);
        if (e.where === 'replace') lines[at] = `${lines[at]?.split(':')[0]}: ${e.text}`;
        else if (e.where === 'append') lines[at] = `${lines[at]} ${e.text}`;
        else if (e.where === 'insert') lines.splice(at, 0, e.text);
        else lines[at] = `  ${lines[at]}`;
      }
      checkLoad(`${lines.join('\n')}\n`);
    }),
    { numRuns: 300 },
  );
});

test('alias bombs and merge-key bombs fail fast, naming the limit', async () => {
  const laughs = (width: number, levels: number, open: string, close: string) => {
    let text = `l0: &l0 ${open}${Array(width).fill('"lol"').join(', ')}${close}\n`;
    for (let i = 1; i <= levels; i++)
      text += `l${i}: &l${i} ${open}${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}${close}\n`;
    return text;
  };
  const mapBomb = (levels: number) => {
    let text = 'm0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10}\n';
    for (let i = 1; i <= levels; i++) text += `m${i}: &m${i} {${Array.from({ length: 10 }, (_, k) => `k${k}: *m${i - 1}`).join(', ')}}\n`;
    return text;
  };
  const mergeBomb = (levels: number) => {
    let text = 'b0: &b0 {a: 1}\n';
    for (let i = 1; i <= levels; i++)
      text += `b${i}: &b${i}\n  <<: [${Array(10)
        .fill(`*b${i - 1}`)
        .join(', ')}]\n`;
    return text;
  };
  const bombs = {
    'billion laughs (sequences)': laughs(10, 9, '[', ']'),
    'billion laughs (maps)': mapBomb(9),
    'a wide alias fan-out': `a: &a [1, 2, 3]\nb: [${Array(20_000).fill('*a').join(', ')}]\n`,
    'a merge-key bomb': mergeBomb(20),
    'a merge-key bomb under a real key': `docs:\n${mergeBomb(12).replace(/^/gm, '  ')}`,
  };
  for (const [name, text] of Object.entries(bombs)) {
    const ms = await cpuMs(() =>
      assert.throws(
        () => parseConfigText(text, 'bomb.yaml', {}),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, name);
          const messages = error.problems.map((p) => p.message).join('\n');
          assert.match(messages, /aliases expand to too much data \(limit 100 expansions\)|merge keys \(<<\) are not supported/, name);
          return true;
        },
      ),
    );
    assert.ok(ms < 1_000, `${name} took ${Math.round(ms)} ms of CPU`);
  }
});

test('deep nesting, long lines and many keys are precise errors, in bounded time', async () => {
  const texts = {
    'flow sequences 5 000 deep': `docs: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`,
    'flow maps 5 000 deep, unclosed': `docs: ${'{a: '.repeat(5_000)}\n`,
    'block maps 300 deep': Array.from({ length: 300 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n'),
    'a 500 kB key': `${'x'.repeat(500_000)}: 1\n`,
    '20 000 duplicate keys': 'port: 1\n'.repeat(20_000),
    '20 000 unknown keys': Array.from({ length: 20_000 }, (_, i) => `k${i}: 1`).join('\n'),
  };
  for (const [name, text] of Object.entries(texts)) {
    const ms = await cpuMs(() =>
      assert.throws(
        () => parseConfigText(text, 'big.yaml', {}),
        (error: unknown) => error instanceof ConfigError && error.problems.every((p) => (p.line ?? 0) >= 1),
        name,
      ),
    );
    assert.ok(ms < 3_000, `${name} took ${Math.round(ms)} ms of CPU`);
  }
});
