import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The README's TypeScript examples compile in a user's project: the package as
 * an install gives it (its declarations, built here into the project's
 * node_modules), the README's own tsconfig (`strict`), `"type": "module"`,
 * and each ```ts block as a module of its own. What a block leaves to the
 * reader (an `app`, a `createPool`…) is declared in `globals.d.ts` below.
 */

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** What the README's snippets take as given. */
const GLOBALS = `
declare const app: import('flotilla').App;
declare const controller: import('flotilla').Controller;
declare const defineService: typeof import('flotilla').defineService;
declare const KError: typeof import('flotilla').KError;
declare function createPool(url: string, size: number): { end(): Promise<void> };
declare function validToken(token: string | undefined): boolean;
declare class OutOfStock extends Error {}
declare const prices: { since(id: string | undefined): AsyncIterable<import('flotilla').SseEvent> };
declare function store(filename: string, file: import('node:stream').Readable): Promise<void>;
`;

/** The fenced blocks of a language, with the README line of their opening fence. */
function blocks(lang: string): { line: number; code: string }[] {
  const found: { line: number; code: string }[] = [];
  for (const match of readme.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))) {
    found.push({ line: readme.slice(0, match.index).split('\n').length, code: match[1]! });
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

test("the README's TypeScript examples compile under its tsconfig (strict)", { timeout: 120_000 }, async (t: TestContext) => {
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
  t.assert.ok(tsconfig, "the Install section's tsconfig.json");
  writeFileSync(join(dir, 'tsconfig.json'), tsconfig.code);
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'globals.d.ts'), GLOBALS);
  const examples = blocks('ts');
  t.assert.ok(examples.length >= 4, `${examples.length} TypeScript blocks`);
  for (const { line, code } of examples) {
    const module = /^\s*(import|export)\b/m.test(code) ? code : `${code}export {};\n`;
    writeFileSync(join(dir, `readme-${line}.ts`), module);
  }

  const checked = await run(['-p', '.']);
  // readme-<fence line>.ts(<n>,<col>) is README.md line <fence line> + <n>
  const located = checked.output.replace(
    /readme-(\d+)\.ts\((\d+),(\d+)\)/g,
    (_, fence, n, col) => `README.md:${Number(fence) + Number(n)}:${col}`,
  );
  t.assert.strictEqual(checked.code, 0, `tsc --noEmit in a user's project:\n${located}`);
});
