/**
 * The generated API reference, `docs/reference/api/`: TypeDoc's Markdown of the package's declarations
 * (what `npm run build` emits as `dist/index.d.ts`), with the doc comments of `src/`. One page per
 * class, function, interface, type and variable that `flotilla` exports; `docs/reference/api.md` is
 * the hand-written tour that links to it.
 *
 * `npm run docs` writes it; `test/docs/api-generated.test.ts` fails when the checked-in pages are not
 * what the current `src/` generates, or when an export has no page. TypeDoc lives in its own package,
 * `tools/typedoc/`, with the TypeScript 5 it needs (the project's TypeScript 7 has no compiler API);
 * its options are `tools/typedoc/typedoc.json`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
export const API_REFERENCE = 'docs/reference/api';

/** Runs a tool of the repository; throws with its output when it fails. */
function run(command: string, args: readonly string[]): void {
  const result = spawnSync(join(root, command), args, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
}

/**
 * Writes the reference of the current `src/` into `out` (emptied first). The declarations are emitted
 * into a folder under `node_modules/` so that their imports (`pino`, `prom-client`…) resolve as they do
 * for `dist/`, and removed after.
 */
export function generateApiReference(out: string): void {
  const cache = join(root, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, 'api-reference-'));
  try {
    run('node_modules/.bin/tsc', [
      '-p',
      'tsconfig.build.json',
      '--emitDeclarationOnly',
      '--sourceMap',
      'false',
      '--outDir',
      join(work, 'types'),
    ]);
    const tsconfig = join(work, 'tsconfig.json');
    const compilerOptions = {
      module: 'nodenext',
      target: 'es2023',
      lib: ['es2023'],
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    };
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions, files: ['types/index.d.ts'] }));
    rmSync(out, { recursive: true, force: true });
    run('tools/typedoc/node_modules/.bin/typedoc', [
      ...['--options', 'tools/typedoc/typedoc.json', '--tsconfig', tsconfig],
      ...['--entryPoints', join(work, 'types/index.d.ts'), '--out', out, '--treatWarningsAsErrors', '--logLevel', 'Warn'],
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every file under `dir`, by its path relative to it, with its text. */
export function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** The pages of `actual` missing, extra or different from those of `expected`, one line each. */
export function differences(expected: Map<string, string>, actual: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const [path, text] of expected) {
    if (!actual.has(path)) lines.push(`${path}: missing`);
    else if (actual.get(path) !== text) lines.push(`${path}: not what src/ generates`);
  }
  for (const path of actual.keys()) if (!expected.has(path)) lines.push(`${path}: no longer generated`);
  return lines;
}

if (import.meta.main) {
  generateApiReference(join(root, API_REFERENCE));
  console.log(`${filesUnder(join(root, API_REFERENCE)).size} pages written to ${API_REFERENCE}/`);
}
