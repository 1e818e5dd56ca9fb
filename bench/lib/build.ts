import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileToPackage } from '../../tools/compile.ts';
import { ROOT } from './server-process.ts';

/**
 * Compiles flotilla (src/) and the benchmark's servers and services to plain
 * JavaScript in a temporary package, as the published package runs (`dist/`,
 * no type stripping: Node's TypeScript loader alone adds ~17 MB RSS and tens of
 * ms of start-up to every process), with the servers' other files (YAML)
 * copied beside them and pointing at the compiled services. Returns the
 * package's path (see `compileToPackage`); removed when the process exits.
 */
export function buildCompiled(): string {
  const out = compileToPackage(['bench/servers', 'bench/services']);
  for (const folder of ['bench/servers', 'bench/services']) {
    mkdirSync(join(out, folder), { recursive: true });
    cpSync(join(ROOT, folder), join(out, folder), {
      recursive: true,
      filter: (src) => !src.endsWith('.ts'),
    });
  }
  for (const yaml of [
    'bench/servers/flotilla-cluster.yaml',
    'bench/services/metrics-cluster.yaml',
    'bench/services/metrics-cluster-stuck.yaml',
  ]) {
    const text = readFileSync(join(out, yaml), 'utf8');
    writeFileSync(join(out, yaml), text.replace(/^(service: .*)\.ts$/m, '$1.js'));
  }
  return out;
}
