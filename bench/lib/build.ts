import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileToPackage } from '../../tools/compile.ts';
import { ROOT } from './server-process.ts';

/** The benchmark's folders compiled with flotilla: its servers (contenders) and services. */
const FOLDERS = ['bench/servers', 'bench/services'];
/** YAML files naming a `service: *.ts`, pointed at the compiled `.js` in the copy. */
const YAMLS = [
  'bench/servers/flotilla-cluster.yaml',
  'bench/servers/flotilla-cluster-primary.yaml',
  'bench/servers/flotilla-cluster-compare.yaml',
  'bench/services/metrics-cluster.yaml',
  'bench/services/metrics-cluster-stuck.yaml',
];

/**
 * Compiles flotilla (src/) and the benchmark's servers and services to plain
 * JavaScript in a temporary package, as the published package runs (`dist/`,
 * no type stripping: Node's TypeScript loader alone adds ~17 MB RSS and tens of
 * ms of start-up to every process), with the servers' other files (YAML)
 * copied beside them and pointing at the compiled services. `root`: where
 * `src/` and `bench/` are read from (default: this repository). Returns the
 * package's path (see `compileToPackage`); removed when the process exits.
 */
export function buildCompiled(root: string = ROOT): string {
  const out = compileToPackage(FOLDERS, root);
  for (const folder of FOLDERS) {
    mkdirSync(join(out, folder), { recursive: true });
    cpSync(join(root, folder), join(out, folder), {
      recursive: true,
      filter: (src) => !src.endsWith('.ts'),
    });
  }
  for (const yaml of YAMLS) {
    const text = readFileSync(join(out, yaml), 'utf8');
    writeFileSync(join(out, yaml), text.replace(/^(service: .*)\.ts$/m, '$1.js'));
  }
  return out;
}

/** A git revision's full and short commit hash (throws when git does not know it). */
export function resolveRevision(rev: string): { commit: string; short: string; subject: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  return { commit, short: git('rev-parse', '--short', commit), subject: git('log', '-1', '--format=%s', commit) };
}

/**
 * `--baseline REV`: flotilla's `src/` as of the git revision `rev` (`git archive`,
 * so the working tree is untouched) with the CURRENT `bench/servers` and
 * `bench/services`, compiled like `buildCompiled` does. The contenders named
 * `<name>@base` run from it, so that a change's before/after figures come from
 * one run. Returns the compiled package's path; both temporary folders are
 * removed when the process exits.
 */
export function buildBaseline(rev: string): string {
  const { commit } = resolveRevision(rev);
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-baseline-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const tar = execFileSync('git', ['archive', '--format=tar', commit, 'src'], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  for (const folder of FOLDERS) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  // the compiler takes the module format (`type: module`) from the package.json, and resolves the
  // imports from node_modules: both the current tree's, as in the build of the current side
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return buildCompiled(dir);
}
