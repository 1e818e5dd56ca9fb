import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve(import.meta.dirname, '../../src');

test('no source file imports values from node:http as ESM (src/utils/node-http.ts requires it)', () => {
  const offenders = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .filter((file) => /^import (?!type )[^;]* from 'node:http';/m.test(readFileSync(join(SRC, file), 'utf8')));
  assert.deepEqual(offenders, []);
});

/** The internal modules a listening App (with its metrics endpoint) has loaded whose name `pattern` matches. */
function loadedByListeningApp(pattern: string): string[] {
  const script = `
    import { App } from 'flotilla';
    const app = new App({ port: 0, host: '127.0.0.1', logging: { level: 'silent' }, metrics: { port: 0, host: '127.0.0.1' } }, { handleSignals: false });
    app.registerController({ routes: () => [{ method: 'GET', path: '/', handler: () => ({ ok: true }) }] });
    const closed = app.listen();
    await app.ready();
    const loaded = process.moduleLoadList.filter((m) => new RegExp(${JSON.stringify(pattern)}).test(m));
    await app.close();
    await closed;
    console.log(JSON.stringify(loaded));
  `;
  const out = execFileSync(process.execPath, ['--conditions=source', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as string[];
}

test('an App that listens has not loaded Node’s bundled undici', () => {
  assert.deepEqual(loadedByListeningApp('undici'), []);
});

// node:tls and node:https are loaded anyway, by prom-client (its pushgateway module); node:http2 is flotilla's alone
test('an App without http2 does not load node:http2 (src/app/transport/front.ts requires it on demand)', () => {
  assert.deepEqual(loadedByListeningApp('^NativeModule (http2|internal/http2/.*)$'), []);
});
