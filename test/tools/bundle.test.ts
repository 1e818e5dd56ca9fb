import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ENTRY_POINTS } from '../../src/entry-points.ts';
import { bundleSources } from '../../tools/bundle.ts';

// The published build (`npm run build`), bundled into a folder under node_modules so that the
// packages it leaves out resolve as they do from an installed flotilla.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function bundled(t: TestContext): { dir: string; js: Map<string, string> } {
  const dir = mkdtempSync(join(ROOT, 'node_modules', '.flotilla-bundle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  bundleSources(ROOT, dir);
  const js = new Map<string, string>();
  for (const file of readdirSync(dir, { recursive: true }) as string[]) {
    if (file.endsWith('.js')) js.set(file, readFileSync(join(dir, file), 'utf8'));
  }
  return { dir, js };
}

test('the bundle: one module per entry point at its path, shared chunks at the root, few files', (t: TestContext) => {
  const { dir, js } = bundled(t);
  for (const name of ['index', 'cli/main', ...ENTRY_POINTS]) t.assert.ok(existsSync(join(dir, `${name}.js`)), `${name}.js`);
  const nested = [...js.keys()].filter((f) => f.includes('/'));
  t.assert.deepStrictEqual(nested.sort(), ['cli/main', ...ENTRY_POINTS].map((n) => `${n}.js`).sort(), 'only entries below the root');
  t.assert.ok(js.size < 80, `${js.size} files`);
});

/**
 * The packages a module of the bundle names: in static and dynamic imports, and in what it requires
 * or resolves through `createRequire` (called at once, or kept as `require`, `load`, `requireWs`, which
 * esbuild may number: `require2`).
 */
function packagesNamed(code: string): Set<string> {
  const names = new Set<string>();
  const specifier =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\)\(\s*|\)\.resolve\(\s*|\b(?:require|load|requireWs)\d*\(\s*)"((?:@[\w.-]+\/)?[a-z][\w.:-]*)(?:\/[^"]*)?"/g;
  for (const [, name] of code.matchAll(specifier)) if (name !== undefined) names.add(name);
  return names;
}

test("the bundle holds flotilla's own code only: every package it names is a declared dependency, imported at run time", (t: TestContext) => {
  const { js } = bundled(t);
  const all = [...js.values()].join('\n');
  // esbuild marks the code it takes from a package with the package's path
  t.assert.doesNotMatch(all, /^\/\/ node_modules\//m);
  // the API's global registration key: a copy inside would be one the service's SDK never registers with
  t.assert.doesNotMatch(all, /opentelemetry\.js\.api\./);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const declared = new Set(['dependencies', 'optionalDependencies', 'peerDependencies'].flatMap((key) => Object.keys(pkg[key] ?? {})));
  const named = new Set([...js.values()].flatMap((code) => [...packagesNamed(code)]));
  for (const name of ['pino', 'prom-client', 'find-my-way', 'ajv', 'jose', 'undici', 'cookie', 'yaml', 'ws', 'swagger-ui-dist']) {
    t.assert.ok(named.has(name), `${name} is imported by name`);
  }
  const undeclared = [...named].filter((name) => !name.startsWith('node:') && !declared.has(name));
  // 'flotilla' itself: the templates `flotilla init` writes
  t.assert.deepStrictEqual(undeclared.filter((name) => name !== 'flotilla').sort(), []);
});

test('an App from the bundle validates (formats too), serializes with its response schema, and answers problems', async (t: TestContext) => {
  const { dir } = bundled(t);
  const { App } = (await import(pathToFileURL(join(dir, 'index.js')).href)) as typeof import('../../src/index.ts');
  const app = new App({ env: 'production', logging: { level: 'silent' } });
  app.registerController({
    routes: () => [
      {
        method: 'GET',
        path: '/hello',
        schema: {
          querystring: { type: 'object', properties: { to: { type: 'string', format: 'email' } } },
          response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } },
        },
        handler: (ctx) => ({ hello: String(ctx.query['to'] ?? 'bundle'), secret: 'left out by the response schema' }),
      },
    ],
  });
  const ok = await app.inject({ method: 'GET', url: '/hello?to=a%40example.com' });
  t.assert.strictEqual(ok.statusCode, 200);
  t.assert.deepStrictEqual(ok.json(), { hello: 'a@example.com' });
  const bad = await app.inject({ method: 'GET', url: '/hello?to=nobody' });
  t.assert.strictEqual(bad.statusCode, 400);
  t.assert.strictEqual((bad.json() as { code: string }).code, 'VALIDATION_FAILED');
  await app.close();
});

test("the bundle exports prom-client's own metric classes: a project's Counter from prom-client is flotilla's", async (t: TestContext) => {
  const { dir } = bundled(t);
  const flotilla = (await import(pathToFileURL(join(dir, 'index.js')).href)) as typeof import('../../src/index.ts');
  const prom = (await import('prom-client')) as typeof import('prom-client');
  t.assert.strictEqual(flotilla.Counter, prom.Counter, 'one prom-client, from node_modules');
  const app = new flotilla.App({ logging: { level: 'silent' } });
  // a counter of the project's prom-client registered under the request counter's name first is fed
  const registry = new prom.Registry();
  const labelNames = ['method', 'route', 'status'];
  const mine = new prom.Counter({ name: 'http_requests_total', help: 'mine', labelNames, registers: [registry] });
  new flotilla.PromMetricsCollector(registry).recordRequest({ method: 'GET', route: '/x', status: 200, durationMs: 1 });
  t.assert.strictEqual((await mine.get()).values[0]?.value, 1);
  t.assert.strictEqual(app.registry.constructor, prom.Registry);
  await app.close();
});
