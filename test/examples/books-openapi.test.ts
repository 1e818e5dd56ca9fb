import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, type TestContext, test } from 'node:test';

// The example's OpenAPI document, as `flotilla openapi` prints it (with a Zod route added), must pass both common linters:
// Redocly's `recommended` ruleset and Spectral's `spectral:oas`, with no error. Both run offline.
const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'flotilla-lint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The entry point of a package's command, run with this Node. */
function bin(pkg: string, name: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const bins = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin;
  return join(dirname(manifest), bins[name] ?? '');
}

// the example's config with a route whose schemas are Zod's added (test/fixtures/schemas/books-with-zod.ts)
const config = join(dir, 'app.yaml');
writeFileSync(
  config,
  readFileSync(join(root, 'config/app.yaml'), 'utf8')
    .replace('service: ../examples/books/service.ts', `service: ${join(root, 'test/fixtures/schemas/books-with-zod.ts')}`)
    .replace('directory: ../examples/books/locales', `directory: ${join(root, 'examples/books/locales')}`),
);
const document = join(dir, 'openapi.json');
writeFileSync(
  document,
  execFileSync(process.execPath, ['--conditions=source', join(root, 'src/cli/main.ts'), 'openapi', '--config', config], {
    encoding: 'utf8',
    // no secret is needed to document the service
    env: { ...process.env, BOOKS_API_KEY: '' },
  }),
);

interface Finding {
  severity: string;
  rule: string;
  where: string;
  message: string;
}

/** Lists the warnings in the test's output (they do not fail it) and returns the errors. */
function report(t: TestContext, findings: Finding[]): string[] {
  for (const f of findings.filter((f) => f.severity !== 'error')) t.diagnostic(`${f.severity} ${f.rule} at ${f.where}: ${f.message}`);
  return findings.filter((f) => f.severity === 'error').map((f) => `${f.rule} at ${f.where}: ${f.message}`);
}

test('the example document declares its security: the create route its API key, the rest none', () => {
  const doc = JSON.parse(readFileSync(document, 'utf8')) as {
    info: { license: unknown };
    security?: unknown;
    paths: Record<string, Record<string, { security?: unknown }>>;
    components: { securitySchemes?: Record<string, unknown> };
  };
  assert.deepEqual(doc.info.license, { name: 'MIT', identifier: 'MIT' });
  assert.deepEqual(doc.components.securitySchemes, {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: "The catalogue's key (BOOKS_API_KEY)" },
  });
  assert.deepEqual(doc.security, []);
  assert.deepEqual(doc.paths['/api/books']?.['post']?.security, [{ apiKey: [] }]);
  assert.deepEqual(doc.paths['/health']?.['get']?.security, []);
  assert.equal(doc.paths['/api/books']?.['get']?.security, undefined, 'public: the document default applies');
});

test("the example document names the statuses the service answers: its create route's 401 and 409, and a limit it reduces", () => {
  const doc = JSON.parse(readFileSync(document, 'utf8')) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { description: string }>; parameters?: { name: string; schema: object }[] }>
    >;
  };
  const create = doc.paths['/api/books']?.['post']?.responses ?? {};
  assert.deepEqual(Object.keys(create), ['201', '400', '401', '403', '404', '409', '413', '415', '503', 'default']);
  assert.equal(create['409']?.description, 'Conflict: `CONFLICT` (a book with this ISBN exists)');
  assert.match(create['401']?.description ?? '', /`UNAUTHORIZED`/);
  const limit = doc.paths['/api/books']?.['get']?.parameters?.find((p) => p.name === 'limit');
  assert.deepEqual(limit?.schema, { type: 'integer', minimum: 1, default: 20 }, 'no maximum: ?limit=1000 is served');
});

test('the Zod route is documented from its schemas, its recursive type as a component', () => {
  const doc = JSON.parse(readFileSync(document, 'utf8')) as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>
    >;
    components: { schemas: Record<string, unknown> };
  };
  const body = doc.paths['/api/books/{id}/reviews']?.['post']?.requestBody?.content['application/json']?.schema;
  assert.deepEqual(body?.properties['stars'], { type: 'integer', minimum: 1, maximum: 5 });
  assert.doesNotMatch(JSON.stringify(doc), /#\/\$defs\//);
});

test('Redocly CLI, recommended ruleset: no error', (t: TestContext) => {
  const run = spawnSync(process.execPath, [bin('@redocly/cli', 'redocly'), 'lint', '--extends=recommended', '--format=json', document], {
    cwd: dir, // no redocly.yaml of anyone's in the way
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  const output = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
    totals: { errors: number };
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  const errors = report(
    t,
    output.problems.map((p) => ({ severity: p.severity, rule: p.ruleId, where: p.location[0]?.pointer ?? '', message: p.message })),
  );
  t.assert.deepStrictEqual(errors, []);
  t.assert.strictEqual(output.totals.errors, 0);
  t.assert.strictEqual(run.status, 0, run.stderr);
});

test('Spectral CLI, spectral:oas ruleset: no error', (t: TestContext) => {
  const ruleset = join(dir, '.spectral.yaml');
  writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
  const results = join(dir, 'spectral.json');
  const run = spawnSync(
    process.execPath,
    [bin('@stoplight/spectral-cli', 'spectral'), 'lint', '--ruleset', ruleset, '--format', 'json', '--output', results, document],
    { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  );
  t.assert.strictEqual(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const output = JSON.parse(readFileSync(results, 'utf8')) as { code: string; severity: number; message: string; path: string[] }[];
  // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint
  const severities = ['error', 'warning', 'information', 'hint'];
  const errors = report(
    t,
    output.map((r) => ({ severity: severities[r.severity] ?? 'error', rule: r.code, where: r.path.join('.'), message: r.message })),
  );
  t.assert.deepStrictEqual(errors, []);
});
