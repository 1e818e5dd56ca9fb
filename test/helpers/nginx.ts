import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { freePort, ServerProcess } from '../../tools/throwaway-server.ts';
import { requireTool } from './require-tool.ts';

/** A test's `skip` option: skipped without Debian's nginx, except in CI, where it must run (see `requireTool`). */
export const SKIP_WITHOUT_NGINX = requireTool('nginx');

/** Debian's binary (`/usr/sbin` is not on every user's PATH), else `nginx` on the PATH. */
const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/**
 * A throwaway nginx for the length of the test: one process in the foreground (`daemon off`,
 * `master_process off`), its pid file, temporary files and configuration in a temporary directory,
 * errors on stderr, listening on a free port of 127.0.0.1. `http` goes into the `http` block
 * (`map`s…), `server` into the `server` block (its `location`s). Resolves with the port once nginx
 * listens; it is stopped and its directory removed after the test.
 *
 * @example
 * const port = await nginx(t, { server: `location / { proxy_pass http://127.0.0.1:${app}; }` });
 */
export async function nginx(t: TestContext, block: { http?: string; server: string }): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-nginx-'));
  const port = await freePort();
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${join(dir, kind)};`).join(' ');
  const conf = [
    'daemon off;',
    'master_process off;',
    `pid ${join(dir, 'nginx.pid')};`,
    // notice: the start-up lines, printed once the listening socket is bound, say it is ready
    'error_log stderr notice;',
    'events { worker_connections 256; }',
    'http {',
    '  access_log off;',
    `  ${temp}`,
    `  ${block.http ?? ''}`,
    `  server {`,
    `    listen 127.0.0.1:${port};`,
    `    ${block.server}`,
    '  }',
    '}',
  ].join('\n');
  writeFileSync(join(dir, 'nginx.conf'), conf);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = await ServerProcess.launch('nginx', NGINX, ['-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf')], / nginx\/\d/);
  t.after(() => server.stop());
  return port;
}
