/**
 * The files `flotilla init` writes into a project. They are code, not files
 * next to it: the package ships only `dist/`. The service, its test and the
 * tsconfig are checked by the install test (`test/install/install.test.ts`):
 * right after `init`, `npm test` passes and `npm start` serves.
 */

/** The config file: everything the cluster needs, each value overridable from the environment. */
export function appYaml(serviceName: string): string {
  return `# The service's config: \`npm start\` runs it as a cluster. Every key: flotilla's docs/reference/config.md.
serviceName: ${serviceName}
port: \${PORT:-3000}
host: \${HOST:-0.0.0.0}
workers: \${WORKERS:-auto}
service: src/service.ts
# env (development, staging or production) is left out: it follows NODE_ENV when that is one of the three,
# else the command's default: production for \`npm start\` (flotilla start: no /docs, no internal error
# details; a secret on a \`\${VAR:-default}\` fallback is refused), development for \`npm run dev\`.

logging:
  level: \${LOG_LEVEL:-info}

metrics:
  port: \${METRICS_PORT:-9464}
`;
}

/** The service: one paginated route over an in-memory list, and one health checker. */
export const SERVICE_TS = `import { defineService, newPage, offsetOf, paginated } from 'flotilla';

/** One item of the list. */
export interface Item {
  id: number;
  name: string;
}

/** The JSON Schema of an item, for the documentation (\`/docs\`) and the response. */
const ITEM_SCHEMA = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
};

/** The data, kept in memory: replace it with your database, behind the same route. */
const items: Item[] = Array.from({ length: 42 }, (_, i) => ({ id: i + 1, name: \`item \${i + 1}\` }));

/**
 * The service. \`flotilla start\` runs this setup in every worker, and once in
 * the primary (\`app.role === 'primary'\`), where only schedulers and shutdown
 * hooks take effect.
 */
export default defineService((app) => {
  app.registerController({
    routes: () => [
      paginated(
        {
          method: 'GET',
          path: '/items',
          summary: 'List items',
          // ?page=1&limit=20: limit at most 100; anything else is a 400 problem
          handler: (ctx) => {
            const q = ctx.parsePagination();
            const start = offsetOf(q);
            return newPage(items.slice(start, start + q.limit), items.length, q.page, q.limit);
          },
        },
        ITEM_SCHEMA,
      ),
    ],
  });

  // GET /health: 200 while every checker resolves, 503 when one throws
  app.registerHealthChecker({
    name: 'items',
    check: async () => {
      if (items.length === 0) throw new Error('no items loaded');
    },
  });
});
`;

/**
 * The test: the service on an App built from app.yaml, requests through \`app.inject\` (no socket). It
 * binds no port, the metrics port included, so it passes while \`flotilla dev\` runs in the same folder
 * (test/integration/init-dev.test.ts).
 */
export const SERVICE_TEST_TS = `import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, loadConfig, type Page, type Problem } from 'flotilla';
import service, { type Item } from '../src/service.ts';

const CONFIG = fileURLToPath(new URL('../app.yaml', import.meta.url));

/**
 * The App of app.yaml with the service set up, closed after the test. Requests go through
 * \`app.inject\`, without a socket; should a test listen (\`app.listen()\`, then \`await app.ready()\`),
 * it gets a port the OS picks, and this App serves no metrics endpoint and traps no signal: a
 * \`flotilla dev\` running beside it keeps its ports. More in flotilla's docs/guides/testing.md.
 */
async function serviceApp(t: TestContext): Promise<App> {
  const config = loadConfig(CONFIG, { overrides: { port: 0, host: '127.0.0.1', logging: { level: 'warn' } } });
  const app = new App(config, { serveMetrics: false, handleSignals: false });
  t.after(() => app.close());
  await service(app);
  return app;
}

test('GET /items answers a page of items', async (t: TestContext) => {
  const app = await serviceApp(t);
  const res = await app.inject({ method: 'GET', url: '/items?page=2&limit=10' });

  t.assert.strictEqual(res.statusCode, 200, res.body);
  const page = res.json<Page<Item>>();
  t.assert.deepStrictEqual(Object.keys(page).sort(), ['data', 'limit', 'page', 'total', 'total_pages']);
  t.assert.strictEqual(page.page, 2);
  t.assert.strictEqual(page.limit, 10);
  t.assert.strictEqual(page.data.length, 10);
  t.assert.strictEqual(page.data[0]?.id, 11);
  t.assert.strictEqual(page.total_pages, Math.ceil(page.total / 10));
});

test('GET /items refuses a page that is not a positive integer', async (t: TestContext) => {
  const app = await serviceApp(t);
  const res = await app.inject({ method: 'GET', url: '/items?page=abc' });

  t.assert.strictEqual(res.statusCode, 400);
  t.assert.strictEqual(res.json<Problem>().code, 'INVALID_PAGINATION');
});

test('GET /health passes', async (t: TestContext) => {
  const app = await serviceApp(t);
  const res = await app.inject({ method: 'GET', url: '/health' });

  t.assert.strictEqual(res.statusCode, 200, res.body);
  const health = res.json<{ status: string; checks: Record<string, { status: string }> }>();
  t.assert.strictEqual(health.status, 'pass');
  t.assert.strictEqual(health.checks['items']?.status, 'pass');
});

test('the App serves over a real socket too, on a port of its own', async (t: TestContext) => {
  const app = await serviceApp(t);
  const listening = app.listen(); // resolves once the App has closed (after the test)
  t.after(() => listening);
  const { port } = await app.ready();
  const res = await fetch(\`http://127.0.0.1:\${port}/items?limit=1\`);

  t.assert.strictEqual(res.status, 200);
  t.assert.strictEqual(((await res.json()) as Page<Item>).data.length, 1);
});
`;

/** The tsconfig of the install steps in docs/guides/first-service.md: Node runs the sources as they are, \`tsc\` only checks. */
export const TSCONFIG_JSON = `{
  "compilerOptions": {
    "target": "es2024",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "strict": true,
    "noEmit": true,
    "allowImportingTsExtensions": true,
    "verbatimModuleSyntax": true,
    "erasableSyntaxOnly": true,
    "types": ["node"]
  }
}
`;

/**
 * The scripts `init` adds to package.json. npm runs a script through `sh -c`,
 * which neither forwards a signal nor replaces itself with the command: `exec`
 * makes the primary npm's child, so that a SIGTERM sent to `npm start` (a
 * process manager's, or `docker stop` of an `npm start` container) reaches it
 * and the service shuts down gracefully, and npm exits with its exit code.
 */
export const SCRIPTS: Readonly<Record<string, string>> = Object.freeze({
  start: 'exec flotilla start --config app.yaml',
  dev: 'exec flotilla dev --config app.yaml',
  test: 'node --test "test/**/*.test.ts"',
});
