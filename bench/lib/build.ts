import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './server-process.ts';

/**
 * Compiles flotilla (src/) and the benchmark's servers and services to plain
 * JavaScript in a temporary directory, as the published package runs (`dist/`,
 * no type stripping: Node's TypeScript loader alone adds ~17 MB RSS and tens of
 * ms of start-up to every process). The directory is a package named
 * `flotilla` whose export is the compiled `src/index.js`, with `node_modules`
 * linked to the repository's. Returns its path; removed when the process exits.
 */
export function buildCompiled(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
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
    include: ['src', 'bench/servers', 'bench/services'].map((p) => join(ROOT, p)),
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(
    join(out, 'package.json'),
    JSON.stringify({ name: 'flotilla', version: pkg.version, type: 'module', exports: { '.': './src/index.js' } }),
  );
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  for (const folder of ['bench/servers', 'bench/services']) {
    mkdirSync(join(out, folder), { recursive: true });
    cpSync(join(ROOT, folder), join(out, folder), {
      recursive: true,
      filter: (src) => !src.endsWith('.ts'),
    });
  }
  for (const yaml of ['bench/servers/flotilla-cluster.yaml', 'bench/services/metrics-cluster.yaml']) {
    const text = readFileSync(join(out, yaml), 'utf8');
    writeFileSync(join(out, yaml), text.replace(/^(service: .*)\.ts$/m, '$1.js'));
  }
  return `${out}/`;
}
