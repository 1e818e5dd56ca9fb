import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The TypeScript examples of README.md and docs/ compile in a user's project:
 * the package as an install gives it (its declarations, built here into the
 * project's node_modules), the tsconfig of the first-service guide (`strict`),
 * `"type": "module"`, and each ```ts block as a module of its own. What a block
 * leaves to the reader (a `createPool`, a controller…) is declared in
 * `globals.d.ts` below; never an `app`: a block that uses one shows where it
 * comes from (a `defineService` setup, a test's `serviceApp(t)`, `new App`).
 */

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/**
 * README.md and every Markdown file under docs/, as paths relative to the repository; but the
 * tutorial's, whose blocks are the files of one project, compiled there by test/docs/tutorial.test.ts,
 * the sessions and testing guides', whose blocks are the files of one project too
 * (test/docs/sessions-testing-guides.test.ts), and the generated API reference's, whose blocks are
 * declarations (test/docs/api-generated.test.ts).
 */
const SEPARATE = new Set(['docs/tutorial', 'docs/reference/api', 'docs/guides/sessions.md', 'docs/guides/testing.md']);

function documents(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (SEPARATE.has(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** What the snippets take as given. */
const GLOBALS = `
declare const controller: import('flotilla').Controller;
declare const defineService: typeof import('flotilla').defineService;
declare const KError: typeof import('flotilla').KError;
declare function createPool(url: string, size: number): { end(): Promise<void> };
declare function validToken(token: string | undefined): boolean;
declare class OutOfStock extends Error {}
declare const prices: { since(id: string | undefined): AsyncIterable<import('flotilla').SseEvent> };
declare function store(filename: string, file: import('node:stream').Readable): Promise<void>;
declare const pool: { end(): Promise<void> };
declare const defineRoute: typeof import('flotilla').defineRoute;
declare const fromConnect: typeof import('flotilla').fromConnect;
type Middleware<S extends object = object> = import('flotilla').Middleware<S>;
type IncomingMessage = import('node:http').IncomingMessage;
declare const handler: import('flotilla').Handler;
declare const requireApiKey: import('flotilla').Middleware;
declare const requireAdmin: import('flotilla').Middleware;
interface User { id: string; name: string }
declare const users: { verify(user: string, password: string): Promise<User | undefined> };
declare class PagesController { routes(): import('flotilla').Route[] }
declare class BooksController { routes(): import('flotilla').Route[] }
declare class UsersController { routes(): import('flotilla').Route[] }
declare class PartnersController { routes(): import('flotilla').Route[] }
declare const passport: typeof import('passport');
interface Tx {
  query(sql: string, params?: unknown[]): Promise<unknown[]>;
}
interface Db {
  query(sql: string, params: unknown[], signal?: AbortSignal): Promise<unknown[]>;
  exclusive<T>(lockKey: number, work: (tx: Tx) => Promise<T>): Promise<T>;
  close(signal: AbortSignal): Promise<void>;
}
declare const SEED_LOCK_KEY: number;
declare function insertBooks(tx: Tx, books: unknown[]): Promise<void>;
declare const db: Db;
declare const BOOKS_SETTINGS: { type: 'object'; properties: { databaseUrl: { type: 'string' } } };
declare function openDatabase(settings: unknown, options: { logger: unknown; primary: boolean }): Promise<Db>;
declare function sampleBooks(count: number): unknown[];
declare const id: number;
declare const ctx: import('flotilla').Ctx;
declare const service: (app: import('flotilla').App) => void | Promise<void>;
declare function serviceApp(t: import('node:test').TestContext): Promise<import('flotilla').App>;
`;

/** The fenced blocks of a language in every document, with the file and line of their opening fence. */
function blocks(lang: string): { file: string; line: number; code: string }[] {
  const found: { file: string; line: number; code: string }[] = [];
  for (const file of documents()) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))) {
      found.push({ file, line: text.slice(0, match.index).split('\n').length, code: match[1]! });
    }
  }
  return found;
}

// Inside the repository (git ignores test/.readme-*), so that the package's own dependencies resolve from its node_modules.
const dir = mkdtempSync(join(root, 'test', '.readme-types-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: dir, encoding: 'utf8' });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

test('the TypeScript examples of README.md and docs/ compile (strict tsconfig)', { timeout: 120_000 }, async (t: TestContext) => {
  // the package as installed: package.json and the declarations `npm run build` writes into dist/
  const pkg = join(dir, 'node_modules', 'flotilla');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), readFileSync(join(root, 'package.json')));
  const built = await run([
    '-p',
    join(root, 'tsconfig.build.json'),
    '--outDir',
    join(pkg, 'dist'),
    '--emitDeclarationOnly',
    '--sourceMap',
    'false',
  ]);
  t.assert.strictEqual(built.code, 0, `the declarations build:\n${built.output}`);

  const tsconfig = blocks('json').find((b) => b.code.includes('"compilerOptions"'));
  t.assert.ok(tsconfig, "the first-service guide's tsconfig.json");
  writeFileSync(join(dir, 'tsconfig.json'), tsconfig.code);
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'globals.d.ts'), GLOBALS);
  const examples = blocks('ts');
  t.assert.ok(examples.length >= 10, `${examples.length} TypeScript blocks`);
  const sources = new Map<string, { file: string; line: number }>();
  for (const [i, { file, line, code }] of examples.entries()) {
    const module = /^\s*(import|export)\b/m.test(code) ? code : `${code}export {};\n`;
    sources.set(`example-${i}.ts`, { file, line });
    writeFileSync(join(dir, `example-${i}.ts`), module);
  }

  const checked = await run(['-p', '.']);
  // example-<i>.ts(<n>,<col>) is line <fence line> + <n> of the document the block comes from
  const located = checked.output.replace(/(example-\d+\.ts)\((\d+),(\d+)\)/g, (whole, name: string, n: string, col: string) => {
    const source = sources.get(name);
    return source === undefined ? whole : `${source.file}:${source.line + Number(n)}:${col}`;
  });
  t.assert.strictEqual(checked.code, 0, `tsc --noEmit in a user's project:\n${located}`);
});
