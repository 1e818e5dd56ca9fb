import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { brotliCompressSync, gzipSync, zstdCompressSync } from 'node:zlib';
import type { StaticOptions } from '../../../src/app/static/static-options.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { serve, testApp } from '../../helpers/app.ts';

/** What a secret beside the served directory holds: no response may ever contain it. */
export const SECRET = 'flotilla-static-secret-7f3a9c';

/** A page of text large enough to be compressed (above the 1 KiB threshold). */
export const CSS = `${'body { margin: 0; padding: 0 }\n'.repeat(100)}`;
export const JS = `console.log(${JSON.stringify('x'.repeat(3000))});\n`;

/**
 * A temporary site: `<tmp>/root` (served) beside `<tmp>/secret.txt`, `<tmp>/root-evil/` (a sibling
 * whose name starts like the root's) and links leaving the root. Removed after the test.
 */
export function staticSite(t: TestContext): { dir: string; root: string } {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-static-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  const files: Record<string, string | Buffer> = {
    'secret.txt': SECRET,
    'root-evil/x.txt': SECRET,
    'root/index.html': '<h1>home</h1>',
    'root/site.css': CSS,
    'root/tiny.txt': 'tiny',
    'root/app.js': JS,
    'root/app.js.br': brotliCompressSync(JS),
    'root/app.js.gz': gzipSync(JS),
    'root/app.js.zst': zstdCompressSync(JS),
    'root/only-gz.txt.gz': gzipSync('only gzip'),
    'root/app.3f9a1c2e.js': 'hashed();',
    'root/docs/index.html': '<h1>docs</h1>',
    'root/docs/index.html.gz': gzipSync('<h1>docs</h1>'),
    'root/empty/.keep': '',
    'root/shell.html': '<h1>shell</h1>',
    'root/.env': SECRET,
    'root/.well-known/security.txt': 'Contact: mailto:security@example.com',
    'root/a b/ünï ☃.txt': 'unicode',
    'root/%2e%2e/name.txt': 'a directory named %2e%2e',
    'root/100%.txt': 'a literal percent sign',
    'root/data.bin': Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    'root/noext': 'no extension',
  };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  symlinkSync('../secret.txt', join(root, 'leak.txt'));
  symlinkSync('..', join(root, 'up'));
  symlinkSync(join(dir, 'root-evil'), join(root, 'evil'));
  symlinkSync('site.css', join(root, 'alias.css'));
  symlinkSync('../secret.txt', join(root, 'leak.js.gz'));
  return { dir, root };
}

/** An App on 127.0.0.1 serving `root` under `prefix`, for the length of the test; its port. */
export async function staticApp(
  t: TestContext,
  root: string,
  prefix = '/static',
  options: StaticOptions = {},
  config: KConfig = {},
): Promise<{ port: number; app: ReturnType<typeof testApp>['app'] }> {
  const { app } = testApp({ logging: { level: 'silent' }, ...config });
  app.serveStatic(prefix, root, options);
  return { port: await serve(t, app), app };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** One request on its own connection; the body as the bytes sent (nothing decompressed). */
export function fetchRaw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
