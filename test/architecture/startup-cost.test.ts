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

/** What a listening App (with its metrics endpoint) has loaded: Node's internal modules, and the URLs of every other module. */
interface Loaded {
  internal: string[];
  urls: string[];
}

/** What a listening App has loaded, its one route declared as `route` (an object literal's source). */
function loadedBy(route: string): Loaded {
  const script = `
    import { registerHooks } from 'node:module';
    const urls = [];
    registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
    const { App } = await import('flotilla');
    const app = new App({ port: 0, host: '127.0.0.1', logging: { level: 'silent' }, metrics: { port: 0, host: '127.0.0.1' } }, { handleSignals: false });
    app.registerController({ routes: () => [${route}] });
    const closed = app.listen();
    await app.ready();
    const internal = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
    await app.close();
    await closed;
    console.log(JSON.stringify({ internal, urls }));
  `;
  const out = execFileSync(process.execPath, ['--conditions=source', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as Loaded;
}

let plain: Loaded | undefined;
/** What a listening App whose one route declares no schema has loaded (run once, shared by the tests). */
const loadedByPlainApp = (): Loaded => (plain ??= loadedBy("{ method: 'GET', path: '/', handler: () => ({ ok: true }) }"));

/** The internal modules a listening App (with its metrics endpoint) has loaded whose name `pattern` matches. */
function loadedByListeningApp(pattern: string): string[] {
  return loadedByPlainApp().internal.filter((m) => new RegExp(pattern).test(m));
}

/** The packages of `node_modules` among `urls`, by name. */
function packagesOf(urls: readonly string[]): Set<string> {
  return new Set(urls.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []));
}

// dist/ imports every package from node_modules: a static import of one of these would load it in every process
test('a listening App has not loaded the packages of the features it does not use', () => {
  const loaded = packagesOf(loadedByPlainApp().urls);
  for (const name of ['prom-client', 'find-my-way', 'pino']) assert.ok(loaded.has(name), `${name} is loaded (the probe works)`);
  const unused = [
    'jose', // jwtAuth, with the first token
    'ws', // the first WebSocket
    '@fastify/send', // serveStatic
    '@fastify/busboy', // the first multipart body
    'undici', // httpCheck, with the first check
    'light-my-request', // app.inject
    'fast-json-stringify', // the first response schema
    'swagger-ui-dist', // the docs page's assets, on request
    'node-cron', // the first cron schedule
    'yaml', // config files: the CLI
    'chokidar', // flotilla dev
    'pg',
    '@redis/client', // the coordinators' clients, when configured
  ];
  assert.deepEqual(
    unused.filter((name) => loaded.has(name)),
    [],
  );
});

test('an App that listens has not loaded Node’s bundled undici', () => {
  assert.deepEqual(loadedByListeningApp('undici'), []);
});

// node:tls and node:https are loaded anyway, by prom-client (its pushgateway module); node:http2 is flotilla's alone
test('an App without http2 does not load node:http2 (src/app/transport/front.ts requires it on demand)', () => {
  assert.deepEqual(loadedByListeningApp('^NativeModule (http2|internal/http2/.*)$'), []);
});
