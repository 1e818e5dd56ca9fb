import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { cacheControlOf, staticMount } from '../../../src/app/static/static-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-static-options-'));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'public', 'app'), { recursive: true });
writeFileSync(join(dir, 'public', 'index.html'), '<p>home</p>');
writeFileSync(join(dir, 'public', 'app', 'shell.html'), '<p>shell</p>');
symlinkSync(join(dir, 'public'), join(dir, 'linked'));
const root = join(dir, 'public');

/** The code and message of what `fn` throws. */
function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('nothing was thrown');
}

describe('staticMount', () => {
  test('defaults: index.html, precompressed br, zstd, gzip, dotfiles denied, max-age 0', (t: TestContext) => {
    const mount = staticMount('/assets/', root, undefined);
    t.assert.strictEqual(mount.prefix, '/assets');
    t.assert.strictEqual(mount.root, root);
    t.assert.strictEqual(mount.index, 'index.html');
    t.assert.deepStrictEqual(mount.encodings, ['br', 'zstd', 'gzip']);
    t.assert.strictEqual(mount.dotfiles, 'deny');
    t.assert.strictEqual(mount.spaFallback, undefined);
    t.assert.strictEqual(cacheControlOf(mount, 'x.js'), 'public, max-age=0');
    t.assert.ok(Object.isFrozen(mount));
    t.assert.strictEqual(staticMount('/', root, {}).prefix, '');
  });

  test('the root is resolved, and its real path kept for the symbolic-link check', (t: TestContext) => {
    const mount = staticMount('/', join(dir, 'linked'), {});
    t.assert.strictEqual(mount.root, join(dir, 'linked'));
    t.assert.strictEqual(mount.realRoot, root);
  });

  test('options', (t: TestContext) => {
    const mount = staticMount('/', root, {
      maxAgeS: 600,
      immutable: /\.[0-9a-f]{8}\.\w+$/g,
      index: false,
      spaFallback: 'app/shell.html',
      precompressed: ['gzip'],
      dotfiles: 'allow',
    });
    t.assert.strictEqual(mount.index, undefined);
    t.assert.deepStrictEqual(mount.spaFallback, ['app', 'shell.html']);
    t.assert.deepStrictEqual(mount.encodings, ['gzip']);
    t.assert.strictEqual(cacheControlOf(mount, 'main.css'), 'public, max-age=600');
    // a global RegExp keeps no state between files
    for (let i = 0; i < 3; i++) t.assert.strictEqual(cacheControlOf(mount, 'js/app.3f9a1c2e.js'), 'public, max-age=31536000, immutable');
    t.assert.deepStrictEqual(staticMount('/', root, { precompressed: false }).encodings, []);
  });

  test('immutable as a predicate or for every file; cacheControl false sends none', (t: TestContext) => {
    const byName = staticMount('/', root, { immutable: (path) => path.startsWith('hashed/') });
    t.assert.strictEqual(cacheControlOf(byName, 'hashed/a.js'), 'public, max-age=31536000, immutable');
    t.assert.strictEqual(cacheControlOf(byName, 'a.js'), 'public, max-age=0');
    t.assert.strictEqual(cacheControlOf(staticMount('/', root, { immutable: true }), 'a.js'), 'public, max-age=31536000, immutable');
    t.assert.strictEqual(cacheControlOf(staticMount('/', root, { cacheControl: false, immutable: true }), 'a.js'), undefined);
  });

  test('a bad prefix, option or fallback is refused at registration, naming it', (t: TestContext) => {
    const bad: [unknown, unknown, RegExp][] = [
      ['assets', {}, /prefix/],
      ['/files/:name', {}, /prefix/],
      ['/files/*', {}, /prefix/],
      ['/a/../b', {}, /prefix/],
      ['/a//b', {}, /prefix/],
      ['/', { maxAge: 60 }, /unknown option 'maxAge'/],
      ['/', { maxAgeS: -1 }, /maxAgeS/],
      ['/', { maxAgeS: 1.5 }, /maxAgeS/],
      ['/', { index: 'a/index.html' }, /index/],
      ['/', { index: '..' }, /index/],
      ['/', { spaFallback: '../etc/passwd' }, /spaFallback/],
      ['/', { spaFallback: 'missing.html' }, /spaFallback 'missing.html' is not a file/],
      ['/', { spaFallback: 'app' }, /spaFallback 'app' is not a file/],
      ['/', { precompressed: ['deflate'] }, /precompressed/],
      ['/', { precompressed: ['br', 'br'] }, /precompressed/],
      ['/', { dotfiles: 'ignore' }, /dotfiles/],
      ['/', { immutable: 'yes' }, /immutable/],
      ['/', { cacheControl: 'no-cache' }, /cacheControl/],
      ['/', 'fast', /options/],
    ];
    for (const [prefix, options, message] of bad) {
      const error = thrown(() => staticMount(prefix as string, root, options as never));
      t.assert.strictEqual(error.code, 'FLO_ERR_BAD_STATIC_OPTION', `${String(prefix)} ${JSON.stringify(options)}`);
      t.assert.match(error.message, message);
    }
  });

  test('a directory that does not exist, or a file, is refused at registration', (t: TestContext) => {
    const missing = thrown(() => staticMount('/assets', join(dir, 'nope'), {}));
    t.assert.strictEqual(missing.code, 'FLO_ERR_STATIC_DIRECTORY');
    t.assert.match(missing.message, /app\.serveStatic\('\/assets'\): cannot serve '.*nope': ENOENT/);
    const file = thrown(() => staticMount('/assets', join(root, 'index.html'), {}));
    t.assert.strictEqual(file.code, 'FLO_ERR_STATIC_DIRECTORY');
    t.assert.match(file.message, /not a directory/);
  });
});
