import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The hard limit of this process for a /proc/self/limits row ("Max open files"), if it is a number. */
function hardLimit(row: string): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(row));
    const hard = Number(line?.slice(26).trim().split(/\s+/)[1]);
    return Number.isInteger(hard) ? hard : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Options of `podman run` for the host. Limits no higher than this process's own: podman's defaults for root
 * (1048576 open files) need CAP_SYS_RESOURCE, which CI's machines do not give root. And runc where the cgroups
 * are a v1/v2 hybrid with controllers on the v2 side (CI's machines): crun, Debian's default, refuses those.
 */
export function podmanRunOptions(): string[] {
  const options: string[] = [];
  const files = Math.min(hardLimit('Max open files') ?? 65536, 65536);
  const processes = Math.min(hardLimit('Max processes') ?? 16384, 16384);
  options.push('--ulimit', `nofile=${files}:${files}`, '--ulimit', `nproc=${processes}:${processes}`);
  let controllers = '';
  try {
    controllers = readFileSync('/sys/fs/cgroup/unified/cgroup.controllers', 'utf8').trim();
  } catch {
    // not a hybrid host
  }
  return controllers === '' ? options : ['--runtime', 'runc', ...options];
}

/**
 * A containers.conf for `podman kube play`, which takes no `--ulimit` or `--runtime`: the same
 * limits and runtime as `podmanRunOptions`, as defaults. Written into `dir`; pass its path in
 * CONTAINERS_CONF.
 */
export function kubePlayConf(dir: string): string {
  const options = podmanRunOptions();
  const ulimits = options.flatMap((option, i) => (options[i - 1] === '--ulimit' ? [JSON.stringify(option)] : []));
  const runtime = options.includes('runc') ? '[engine]\nruntime = "runc"\n' : '';
  const file = join(dir, 'containers.conf');
  writeFileSync(file, `[containers]\ndefault_ulimits = [${ulimits.join(', ')}]\n${runtime}`);
  return file;
}
