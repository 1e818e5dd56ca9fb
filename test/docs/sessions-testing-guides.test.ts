import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { createClient } from 'redis';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

/**
 * docs/guides/sessions.md and docs/guides/testing.md, copied as a reader copies them: each page's
 * files (a "**File: `path`**" line, then the file whole, in a fenced block, as the tutorial's) are
 * written into a project, with the sessions page's YAML block as its `app.yaml`; then the project
 * is type-checked with flotilla's compiler options, and its tests, the pages' own, run under
 * `node --test`. Every `ts` block of the two pages is such a file: none is left unrun.
 */

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The files a guide gives, by path, and the count of its `ts` blocks. */
function guide(name: string): { files: Map<string, string>; tsBlocks: number; yaml: string[] } {
  const text = readFileSync(join(root, 'docs/guides', name), 'utf8');
  const files = new Map<string, string>();
  for (const match of text.matchAll(/^\*\*File: `([^`]+)`\*\*\n\n```\w*\n([\s\S]*?)^```$/gm)) {
    const [, path, content] = match as unknown as [string, string, string];
    files.set(path, content);
  }
  const yaml = [...text.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
  return { files, tsBlocks: text.match(/^```ts$/gm)?.length ?? 0, yaml };
}

const sessions = guide('sessions.md');
const testing = guide('testing.md');

/**
 * A project with `files`, inside the repository so that `import … from 'flotilla'` resolves to this
 * package (self-reference, its `source` condition): removed after the tests.
 */
function project(name: string, files: Map<string, string>): string {
  const dir = mkdtempSync(join(root, 'test', `.guide-${name}-`));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, content] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../../tsconfig.json', include: ['src', 'test'] }));
  return dir;
}

/** `tsc` on the project: the guide's code compiles as a TypeScript service's would. */
async function typeCheck(t: TestContext, dir: string): Promise<void> {
  const tsc = join(root, 'node_modules/.bin/tsc');
  const result = await run(tsc, ['-p', join(dir, 'tsconfig.json'), '--noEmit'], { cwd: dir }).catch((error: { stdout: string }) => error);
  t.assert.strictEqual(result.stdout.trim(), '', 'the files type-check');
}

/** `node --test` on the project's test files, from the project's directory: how many passed, and none failed. */
async function nodeTest(t: TestContext, dir: string, tests: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const args = ['--conditions=source', '--test', '--test-reporter=spec', '--test-concurrency=1', ...tests];
  // the project's own run, not a child of this one's (which NODE_TEST_CONTEXT would make it)
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const result = await run(process.execPath, args, { cwd: dir, env: { ...inherited, ...env }, timeout: 120_000 }).catch(
    (error: { stdout: string; stderr: string }) => error,
  );
  const count = (what: string) => Number(new RegExp(`^ℹ ${what} (\\d+)$`, 'm').exec(result.stdout)?.[1]);
  const output = `${result.stdout}\n${result.stderr}`;
  t.assert.deepStrictEqual({ pass: count('pass'), fail: count('fail') }, { pass: tests.length, fail: 0 }, output);
}

test('every ts block of both pages is a file the test writes; the sessions page has one YAML block', (t: TestContext) => {
  t.assert.strictEqual(sessions.files.size, sessions.tsBlocks, 'sessions.md');
  t.assert.strictEqual(testing.files.size, testing.tsBlocks, 'testing.md');
  t.assert.strictEqual(sessions.yaml.length, 1);
  for (const path of ['src/users.ts', 'src/sessions.ts', 'src/service.ts', 'test/login.test.ts'])
    t.assert.ok(sessions.files.has(path), path);
  t.assert.ok(testing.files.has('test/service-app.ts'));
});

test('sessions.md: its service keeps sessions in connect-redis on a real Redis; its test logs in and out', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 180_000,
}, async (t: TestContext) => {
  const dir = project('sessions', new Map([['app.yaml', sessions.yaml[0] as string], ...sessions.files]));
  await typeCheck(t, dir);
  const redis = await redisServer(t);
  await nodeTest(t, dir, ['test/login.test.ts'], { REDIS_URL: redis.url });
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    const stats = await client.info('stats');
    const hits = Number(/^keyspace_hits:(\d+)/m.exec(stats)?.[1]);
    t.assert.ok(hits > 0, `/me read the session from Redis (keyspace_hits ${hits})`);
  } finally {
    await client.close();
  }
});

/** What testing.md's tests talk to: the login of sessions.md, a paged list, a chat socket and a scheduled job. */
const TESTING_SERVICE = `import { CronScheduler, defineService, KError, newPage } from 'flotilla';
import { login, logout, me } from './sessions.ts';

const items = Array.from({ length: 25 }, (_, i) => ({ id: i + 1 }));

export default defineService((app) => {
  app.registerController({
    routes: () => [
      login,
      me,
      logout,
      {
        method: 'GET',
        path: '/items',
        handler: (ctx) => {
          const { page, limit } = ctx.parsePagination();
          return newPage(items.slice((page - 1) * limit, page * limit), items.length, page, limit);
        },
      },
      {
        method: 'GET',
        path: '/chat',
        protocols: ['chat.v1'],
        onRequest: [
          (ctx) => {
            if (ctx.headers.authorization !== 'Bearer test-token') throw KError.unauthorized('a token, please');
          },
        ],
        websocket: (socket) => {
          socket.on('message', (data) => socket.send(\`echo: \${String(data)}\`));
        },
      },
    ],
  });
  app.registerScheduler(new CronScheduler([{ name: 'purge-carts', cron: '0 0 3 * * *', run: () => {} }]));
});
`;

test("testing.md: its helper and its tests, on a service with sessions.md's login", { timeout: 180_000 }, async (t: TestContext) => {
  const files = new Map([
    ['app.yaml', sessions.yaml[0] as string],
    ['src/users.ts', sessions.files.get('src/users.ts') as string],
    ['src/sessions.ts', sessions.files.get('src/sessions.ts') as string],
    ['src/service.ts', TESTING_SERVICE],
    ...testing.files,
  ]);
  const dir = project('testing', files);
  await typeCheck(t, dir);
  const tests = [...testing.files.keys()].filter((path) => path.endsWith('.test.ts'));
  t.assert.strictEqual(tests.length, 5);
  await nodeTest(t, dir, tests);
});
