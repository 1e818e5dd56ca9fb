import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { ENTRY_POINTS } from '../src/entry-points.ts';

/**
 * Packages left out of the bundle, loaded from `node_modules` at run time:
 * - @opentelemetry/api: a peer dependency, the one copy the service's SDK registers its tracer
 *   provider with (a copy of flotilla's own would record no span: README, "Dependencies");
 * - ajv and ajv-formats: fast-json-stringify and ajv-formats, required on first use, require ajv
 *   themselves; one copy keeps ajv's code generation (its classes) whole;
 * - pino: its transports start worker threads on files of its own, found by path;
 * - chokidar: `flotilla dev` only;
 * - light-my-request: `app.inject` only (required on first use);
 * - the coordinators' clients, optional dependencies imported by name when configured.
 * Packages required on first use (`createRequire`: yaml, ws, fast-json-stringify, node-cron,
 * @fastify/busboy, swagger-ui-dist…) are never followed by the bundler and stay out as well.
 */
const EXTERNAL = ['@opentelemetry/api', 'ajv', 'ajv-formats', 'pino', 'chokidar', 'light-my-request', '@redis/client', 'pg'];

/**
 * CommonJS dependencies bundled into ES modules still call `require` (node's own modules): each
 * output file gets one, made for its own location.
 */
const BANNER = "import { createRequire as __flotillaRequire } from 'node:module'; const require = __flotillaRequire(import.meta.url);";

/**
 * Bundles flotilla's sources (`<root>/src`) into `outDir`, as the published package runs: one ES
 * module per entry (`index.js`, `cli/main.js` and each of `src/entry-points.ts`, at their paths
 * under `src/`) and the code they share in chunks at the root of `outDir`, with the dependencies
 * except {@link EXTERNAL}. A cluster's processes load a few dozen files instead of some 480 modules:
 * the cold start's largest share (bench/results/footprint.md). Throws when the code that locates the
 * entry points (`src/entry-points.ts`) did not land at the root, where its relative paths hold.
 *
 * @example
 * bundleSources(process.cwd(), 'dist');
 */
export function bundleSources(root: string, outDir: string): void {
  const src = join(root, 'src');
  buildSync({
    absWorkingDir: root,
    // a checkout of another revision has none of its own: this repository's
    nodePaths: [join(fileURLToPath(new URL('../', import.meta.url)), 'node_modules')],
    entryPoints: ['index', 'cli/main', ...ENTRY_POINTS].map((name) => join(src, `${name}.ts`)),
    outbase: src,
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: EXTERNAL.flatMap((name) => [name, `${name}/*`]),
    banner: { js: BANNER },
    sourcemap: 'linked',
    // find-my-way's and ajv's conditions: the Node build, as an unbundled import would pick
    conditions: ['node'],
    logLevel: 'warning',
    legalComments: 'inline',
  });
  for (const file of readdirSync(outDir, { recursive: true }) as string[]) {
    if (!file.endsWith('.js') || !file.includes('/')) continue;
    if (readFileSync(join(outDir, file), 'utf8').includes('"../package.json"'))
      throw new Error(`${relative(root, join(outDir, file))}: src/entry-points.ts was bundled below the root; its paths would not hold`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../', import.meta.url));
  bundleSources(root, join(root, process.argv[2] ?? 'dist'));
}
