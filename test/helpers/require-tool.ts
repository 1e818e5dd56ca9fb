import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The system tools some tests drive for real, each installed by `npm test` where it can (tools/provision.sh). */
export type Tool = 'prometheus' | 'chromium' | 'podman' | 'redis-server' | 'postgresql' | 'curl' | 'openssl' | 'nginx' | 'testssl';

/** The Debian packages of each tool, as tools/provision.sh installs them. */
const PACKAGES: Record<Tool, string> = {
  prometheus: 'prometheus',
  chromium: 'chromium',
  podman: 'podman runc debootstrap catatonit',
  'redis-server': 'redis-server',
  postgresql: 'postgresql',
  curl: 'curl',
  openssl: 'openssl',
  nginx: 'nginx-light',
  testssl: 'testssl.sh',
};

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const FOUND: Record<Tool, () => boolean> = {
  prometheus: () => onPath('promtool') && onPath('prometheus'),
  chromium: () => existsSync(process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'),
  podman: () => onPath('podman'),
  'redis-server': () => onPath('redis-server'),
  curl: () => onPath('curl'),
  openssl: () => onPath('openssl'),
  nginx: () => onPath('nginx') || existsSync('/usr/sbin/nginx'),
  testssl: () => onPath('testssl'),
  postgresql: () => {
    const root = '/usr/lib/postgresql';
    return existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, 'bin', 'initdb')));
  },
};

/** Whether `tool` counts as missing on purpose: `FLOTILLA_ABSENT_TOOLS=redis-server,postgresql` (or `all`). */
function simulatedAbsent(tool: Tool, absent = process.env['FLOTILLA_ABSENT_TOOLS'] ?? ''): boolean {
  return absent === 'all' || absent.split(',').includes(tool);
}

/** Whether the tests run in CI, where nothing may be skipped. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  return env['CI'] !== undefined && env['CI'] !== '' && env['CI'] !== 'false' && env['CI'] !== '0';
}

/**
 * The `skip` option of a test (or suite) that needs `tool`: `false` when it is
 * installed, else a reason saying how to install it. Under `CI=true` a missing
 * tool throws instead, failing the test file: nothing may be skipped there.
 * `FLOTILLA_ABSENT_TOOLS` (comma-separated, or `all`) makes tools count as
 * missing, to try the skips on a machine that has them.
 *
 * @example
 * test('a real redis-server', { skip: requireTool('redis-server') }, async (t) => { … });
 */
export function requireTool(tool: Tool): string | false {
  if (!simulatedAbsent(tool) && FOUND[tool]()) return false;
  const how = `sudo apt-get install -y ${PACKAGES[tool]}`;
  if (inCI()) throw new Error(`${tool} is required when CI is set (nothing may be skipped there): ${how}`);
  return `${tool} is not installed: ${how} (npm test as root installs it)`;
}
