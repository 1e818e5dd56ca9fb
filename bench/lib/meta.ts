import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, release } from 'node:os';
import { ROOT } from './server-process.ts';

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** The version of `pkg` in the repository's node_modules (`?` when it is not installed). */
export function packageVersion(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(`${ROOT}node_modules/${pkg}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** Where and with what the run happened. */
export function machineMeta(wrk: string): Record<string, unknown> & { date: string } {
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'src').length > 0;
  return {
    date: new Date().toISOString(),
    node: process.versions.node,
    cpu: cpus()[0]?.model ?? '?',
    cores: availableParallelism(),
    kernel: release(),
    wrk,
    commit: `${commit || '?'}${dirty ? ' (src/ modified)' : ''}`,
    versions: Object.fromEntries(
      ['fastify', '@fastify/cors', 'express', 'cors', 'pino', 'prom-client', 'find-my-way', '@opentelemetry/api'].map((p) => [
        p,
        packageVersion(p),
      ]),
    ),
  };
}
