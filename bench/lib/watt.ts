/**
 * Platformatic Watt for the cluster comparison (`--cluster-compare`), installed on first use into
 * `bench/.watt/` (its own package.json and node_modules, ignored by git): Watt is not a dependency of
 * flotilla, and `npm install` runs there only when the folder is missing or holds other versions.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './server-process.ts';

/** Where Watt is installed. */
export const WATT_DIR = join(ROOT, 'bench/.watt');

/**
 * The packages, pinned: `wattpm` (the CLI and runtime) and `@platformatic/node`, the capability
 * that runs a Node.js application (its newest release on the registry is 3.65.0; Watt loads it from
 * this folder when the application's own folder has none).
 */
export const WATT_PACKAGES: Readonly<Record<string, string>> = { wattpm: '3.67.0', '@platformatic/node': '3.65.0' };

const MANIFEST = {
  name: 'flotilla-bench-watt',
  private: true,
  description: 'Platformatic Watt for `npm run bench -- --cluster-compare` (bench/lib/watt.ts), installed on first use',
  dependencies: WATT_PACKAGES,
};

/** The installed version of `pkg` under `bench/.watt/node_modules`, or undefined. */
function installed(pkg: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(WATT_DIR, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

export interface Watt {
  /** The `wattpm` CLI script, to run with this process's node (the `node` on PATH may be older). */
  cli: string;
  /** Installed versions: wattpm, @platformatic/runtime, @platformatic/node. */
  versions: Record<string, string>;
}

/**
 * Watt, installed into `bench/.watt/` with `npm install --no-audit --no-fund` when the folder is
 * missing or stale (its package.json or an installed version differs from `WATT_PACKAGES`); `log`
 * says when it installs. Throws when npm fails (the registry is unreachable, …).
 */
export function ensureWatt(log: (line: string) => void = () => {}): Watt {
  const manifest = `${JSON.stringify(MANIFEST, null, 2)}\n`;
  const path = join(WATT_DIR, 'package.json');
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  const stale = current !== manifest || Object.entries(WATT_PACKAGES).some(([pkg, version]) => installed(pkg) !== version);
  if (stale) {
    log(
      `installing ${Object.entries(WATT_PACKAGES)
        .map(([p, v]) => `${p}@${v}`)
        .join(' ')} into bench/.watt/ (npm install, once)`,
    );
    mkdirSync(WATT_DIR, { recursive: true });
    writeFileSync(path, manifest);
    // npm's output to stderr: stdout carries the report
    execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: WATT_DIR, stdio: ['ignore', 2, 2] });
  }
  const versions: Record<string, string> = {};
  for (const pkg of ['wattpm', '@platformatic/runtime', '@platformatic/node']) versions[pkg] = installed(pkg) ?? '?';
  for (const [pkg, version] of Object.entries(WATT_PACKAGES)) {
    if (versions[pkg] !== version) throw new Error(`bench/.watt: ${pkg} is ${versions[pkg]} after npm install, not ${version}`);
  }
  return { cli: join(WATT_DIR, 'node_modules/wattpm/bin/cli.js'), versions };
}
