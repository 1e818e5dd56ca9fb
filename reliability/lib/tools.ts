import { execFileSync, spawnSync } from 'node:child_process';

/**
 * Makes sure a Debian-packaged command exists: when `command` is missing,
 * runs `apt-get install -y <pkg>` (after an `apt-get update` if the first try
 * fails), with sudo when not root. Throws with install hints when it cannot.
 */
export function ensureCommand(command: string, pkg: string, log: (line: string) => void): void {
  if (found(command)) return;
  log(`${command} is missing: apt-get install -y ${pkg}`);
  const asRoot = process.getuid?.() === 0;
  const apt = (args: string[]) =>
    asRoot ? execFileSync('apt-get', args, { stdio: 'inherit' }) : execFileSync('sudo', ['apt-get', ...args], { stdio: 'inherit' });
  try {
    try {
      apt(['install', '-y', pkg]);
    } catch {
      apt(['update']);
      apt(['install', '-y', pkg]);
    }
  } catch (error) {
    throw new Error(`${command} is required and could not be installed (${(error as Error).message}); install the '${pkg}' package`);
  }
  if (!found(command)) throw new Error(`${command} is still missing after installing '${pkg}'`);
}

function found(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
