import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSources } from './bundle.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Compiles flotilla (src/, bundled as `npm run build` does: `tools/bundle.ts`) and `extra` (files
 * or folders, relative to the repository's root) to plain JavaScript, laid out as in the repository
 * (`src/cli/main.ts` → `<dir>/src/cli/main.js`), in a temporary directory that
 * is a package named `flotilla`: its export is the compiled `src/index.js`, its
 * `node_modules` a link to the repository's. That is how the published package
 * and the Docker image run: no type stripping at start-up. The benchmark and
 * the reliability checks run their clusters from it. Returns the directory
 * (with a trailing slash); removed when the process exits. `root`: where
 * `src/` and `extra` are read from (default: this repository), e.g. a
 * checkout of another revision; the compiler options, the version and
 * `node_modules` are always this repository's.
 */
export function compileToPackage(extra: readonly string[], root: string = ROOT): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-compiled-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  const config = {
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: {
      noEmit: false,
      allowImportingTsExtensions: false,
      rootDir: root,
      outDir: out,
      typeRoots: [join(ROOT, 'node_modules/@types')],
      declaration: false,
      sourceMap: false,
      noCheck: true,
    },
    include: ['src', ...extra].map((p) => join(root, p)),
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' });
  // flotilla itself as it is published: bundled (revisions from before the bundle keep tsc's layout)
  if (existsSync(join(root, 'src/entry-points.ts'))) {
    rmSync(join(out, 'src'), { recursive: true, force: true });
    bundleSources(root, join(out, 'src'));
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(
    join(out, 'package.json'),
    JSON.stringify({ name: 'flotilla', version: pkg.version, type: 'module', exports: { '.': './src/index.js' } }),
  );
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  return `${out}/`;
}
