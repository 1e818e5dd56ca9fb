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

test('the bundle leaves out the OpenTelemetry API, ajv and pino: one copy of each, imported at run time', (t: TestContext) => {
  const { js } = bundled(t);
  const all = [...js.values()].join('\n');
  // the API's global registration key: a copy inside would be one the service's SDK never registers with
  t.assert.doesNotMatch(all, /opentelemetry\.js\.api\./);
  t.assert.match(all, /require\("@opentelemetry\/api"\)/);
  t.assert.match(all, /from "pino"/);
  // fast-json-stringify and ajv-formats require ajv: a second copy inside would mix two code generators
  t.assert.doesNotMatch(all, /node_modules\/ajv\//);
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

test("the bundle exports the metric classes it runs: a user's Counter is its own kind, a second prom-client's is not", async (t: TestContext) => {
  const { dir } = bundled(t);
  const flotilla = (await import(pathToFileURL(join(dir, 'index.js')).href)) as typeof import('../../src/index.ts');
  const prom = (await import('prom-client')) as typeof import('prom-client');
  t.assert.notStrictEqual(flotilla.Counter, prom.Counter, "prom-client is inside the bundle: a project's own is another copy");
  const app = new flotilla.App({ logging: { level: 'silent' } });
  // the bundle's Registry (exported as a type only), as app.registry has it
  const Registry = app.registry.constructor as new () => typeof app.registry;
  const labelNames = ['method', 'route', 'status'];

  // a counter registered under the request counter's name first is fed, if it is a Counter of flotilla's copy
  const registry = new Registry();
  const mine = new flotilla.Counter({ name: 'http_requests_total', help: 'mine', labelNames, registers: [registry] });
  new flotilla.PromMetricsCollector(registry).recordRequest({ method: 'GET', route: '/x', status: 200, durationMs: 1 });
  t.assert.strictEqual((await mine.get()).values[0]?.value, 1);

  const other = new Registry();
  other.registerMetric(new prom.Counter({ name: 'http_requests_total', help: 'foreign', labelNames, registers: [] }) as never);
  t.assert.throws(() => new flotilla.PromMetricsCollector(other), { code: 'FLO_ERR_METRIC_CONFLICT' });
  await app.close();
});
