// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseDocument } from 'yaml';
import { type FallbackValue, interpolate, interpolateDocument } from '../../src/config/interpolate.ts';

const envYaml = readFileSync(new URL('../fixtures/config/env.yaml', import.meta.url), 'utf8');

test('${VAR} takes the variable, ${VAR:-default} the default when unset or empty', () => {
  const env = { HOST: 'db', EMPTY: '' };
  assert.deepEqual(interpolate('${HOST}', env), { ok: true, value: 'db', whole: true, fallbacks: [] });
  assert.deepEqual(interpolate('${EMPTY}', env), { ok: true, value: '', whole: true, fallbacks: [] });
  assert.deepEqual(interpolate('${EMPTY:-x}', env), {
    ok: true,
    value: 'x',
    whole: true,
    fallbacks: [{ name: 'EMPTY', variable: 'empty', start: 0, end: 1 }],
  });
  assert.deepEqual(interpolate('${NOPE:-a:-b}', env), {
    ok: true,
    value: 'a:-b',
    whole: true,
    fallbacks: [{ name: 'NOPE', variable: 'unset', start: 0, end: 4 }],
  });
  assert.deepEqual(interpolate('http://${HOST}:${PORT:-5432}/x', env), {
    ok: true,
    value: 'http://db:5432/x',
    whole: false,
    fallbacks: [{ name: 'PORT', variable: 'unset', start: 10, end: 14 }],
  });
  assert.deepEqual(interpolate('${HOST:-}', {}), { ok: true, value: '', whole: true, fallbacks: [] });
});

test('a non-empty default taken is recorded with where it lies in the value; an empty one, or a set variable, is not', () => {
  const result = interpolate('redis://:${PW:-devpw}@${HOST:-localhost}:${PORT:-}', { HOST: 'cache' });
  assert.ok(result.ok);
  assert.equal(result.value, 'redis://:devpw@cache:');
  assert.deepEqual(result.fallbacks, [{ name: 'PW', variable: 'unset', start: 9, end: 14 }]);
  assert.equal(result.value.slice(9, 14), 'devpw');
  const doc = parseDocument('a: ${A:-1}\nb:\n  - "x-${B:-y}"\nc: ${C:-}\nd: ${D:-set}\n');
  const fallbacks: FallbackValue[] = [];
  assert.deepEqual(interpolateDocument(doc, { D: 'given' }, undefined, fallbacks), []);
  assert.deepEqual(
    fallbacks.map((f) => ({ path: f.path, value: f.value, names: f.fallbacks.map((x) => x.name) })),
    [
      { path: ['a'], value: '1', names: ['A'] },
      { path: ['b', 0], value: 'x-y', names: ['B'] },
    ],
  );
  assert.deepEqual(doc.toJS(), { a: 1, b: ['x-y'], c: null, d: 'given' });
});

test('$${ is a literal ${ and a lone $ stays', () => {
  assert.deepEqual(interpolate('$${HOST} costs $5 or $$', { HOST: 'db' }), {
    ok: true,
    value: '${HOST} costs $5 or $$',
    whole: false,
    fallbacks: [],
  });
});

test('a missing variable, a bad name or an unterminated expression is an error, never a guess', () => {
  assert.deepEqual(interpolate('${A}-${B}', {}), {
    ok: false,
    errors: [
      'environment variable A is not set (use ${A:-default} to give a default)',
      'environment variable B is not set (use ${B:-default} to give a default)',
    ],
    unset: ['A', 'B'],
  });
  const badName = interpolate('${1X}', {});
  assert.ok(!badName.ok && /invalid expression \$\{1X\}/.test(badName.errors[0] ?? ''));
  const unterminated = interpolate('x ${HOST', { HOST: 'db' });
  assert.ok(!unterminated.ok && /unterminated/.test(unterminated.errors[0] ?? ''));
});

test('plain scalars that are one expression are re-typed; quoted ones stay strings', () => {
  const doc = parseDocument(envYaml);
  const problems = interpolateDocument(doc, { PORT: '8080', DISABLE_HEALTH: 'true', API_VERSION: '3' });
  assert.deepEqual(problems, []);
  assert.deepEqual(doc.toJS(), {
    serviceName: 'books',
    port: 8080,
    host: '0.0.0.0',
    disableHealth: true,
    docs: { title: 'Books on dev', description: 'Set with ${STAGE} in the environment', version: '3' },
  });
});

test('substituted text never becomes YAML structure', () => {
  const doc = parseDocument('a: ${V}\nb: "${V}"\nc: ${N}\nd: !!str ${N}\ne: ${NUL}\n');
  interpolateDocument(doc, { V: '[1, {x: 2}]\nk: v', N: '0x10', NUL: '~' });
  assert.deepEqual(doc.toJS(), { a: '[1, {x: 2}]\nk: v', b: '[1, {x: 2}]\nk: v', c: 16, d: '0x10', e: null });
});

test('map keys are not interpolated, and problems carry the key path and offset', () => {
  const text = 'list:\n  - ok\n  - ${MISSING}\n${KEY}: 1\n';
  const doc = parseDocument(text);
  const problems = interpolateDocument(doc, {});
  assert.deepEqual(problems, [
    {
      path: ['list', 1],
      offset: text.indexOf('${MISSING}'),
      message: 'environment variable MISSING is not set (use ${MISSING:-default} to give a default)',
    },
  ]);
  assert.deepEqual(Object.keys(doc.toJS()), ['list', '${KEY}']);
});
