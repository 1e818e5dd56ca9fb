import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How the clusters run: the CLI and the fixture service, and the Node flags they need. */
export interface Runtime {
  kind: 'compiled' | 'source';
  cli: string;
  service: string;
  execArgv: string[];
}

/** From the TypeScript sources, with Node's type stripping (what `npm start` does). */
export function sourceRuntime(): Runtime {
  return {
    kind: 'source',
    cli: join(ROOT, 'src/cli/main.ts'),
    service: join(ROOT, 'reliability/service.ts'),
    execArgv: ['--conditions=source'],
  };
}

/**
 * Compiles flotilla (src/) and the fixture service to JavaScript in a
 * temporary package named `flotilla` (node_modules linked to the
 * repository's), as the published package and the Docker image run: no type
 * stripping at start-up, which matters for how fast a replacement worker
 * boots. Removed when the process exits.
 */
export function compiledRuntime(): Runtime {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-reliability-build-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  const config = {
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: {
      noEmit: false,
      allowImportingTsExtensions: false,
      rootDir: ROOT,
      outDir: out,
      typeRoots: [join(ROOT, 'node_modules/@types')],
      declaration: false,
      sourceMap: false,
      noCheck: true,
    },
    include: [join(ROOT, 'src'), join(ROOT, 'reliability/service.ts')],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(
    join(out, 'package.json'),
    JSON.stringify({ name: 'flotilla', version: pkg.version, type: 'module', exports: { '.': './src/index.js' } }),
  );
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  return { kind: 'compiled', cli: join(out, 'src/cli/main.js'), service: join(out, 'reliability/service.js'), execArgv: [] };
}
