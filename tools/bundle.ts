import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/**
 * Bundles flotilla's sources (`<root>/src`) into `outDir`, as the published package runs: one ES
 * module per entry (`index.js`, `cli/main.js` and each of `src/entry-points.ts`, at their paths
 * under `src/`) and the code they share in chunks at the root of `outDir`. flotilla's own code
 * only: every package (`packages: 'external'`) is imported from `node_modules` at run time, so
 * that `npm audit fix` or `npm update` of a dependency reaches the code that runs, and a project's
 * `prom-client` or `@opentelemetry/api` can be the very copy flotilla uses. Its own modules joined
 * in a few dozen files are the cold start's share that bundling still saves (bench/results/footprint.md).
 * Throws when the code that locates the entry points (`src/entry-points.ts`) did not land at the
 * root, where its relative paths hold.
 *
 * @example
 * bundleSources(process.cwd(), 'dist');
 */
export function bundleSources(root: string, outDir: string): void {
  const src = join(root, 'src');
  buildSync({
    absWorkingDir: root,
    entryPoints: ['index', 'cli/main', ...entryPointsOf(src)].map((name) => join(src, `${name}.ts`)),
    outbase: src,
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const file of readdirSync(outDir, { recursive: true }) as string[]) {
    if (!file.endsWith('.js') || !file.includes('/')) continue;
    if (readFileSync(join(outDir, file), 'utf8').includes('"../package.json"'))
      throw new Error(`${relative(root, join(outDir, file))}: src/entry-points.ts was bundled below the root; its paths would not hold`);
  }
}

/**
 * The `ENTRY_POINTS` of the tree being bundled, read from its own src/entry-points.ts: a baseline's
 * src/ (bench/lib/build.ts) has the list of its revision, not the current one.
 */
function entryPointsOf(src: string): string[] {
  const file = join(src, 'entry-points.ts');
  const list = /export const ENTRY_POINTS\b[^=]*=\s*\[([^\]]*)\]/.exec(readFileSync(file, 'utf8'))?.[1];
  if (list === undefined) throw new Error(`${file}: no ENTRY_POINTS array`);
  return [...list.matchAll(/'([^']+)'/g)].map((match) => match[1] as string);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../', import.meta.url));
  bundleSources(root, join(root, process.argv[2] ?? 'dist'));
}
