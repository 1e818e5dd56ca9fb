import { describe, type TestContext, test } from 'node:test';
import { encodedPath, staticPath } from '../../../src/app/static/static-path.ts';

describe('staticPath', () => {
  test('a file and a directory below the mount', (t: TestContext) => {
    t.assert.deepStrictEqual(staticPath('site.css', 'deny'), { segments: ['site.css'], directory: false });
    t.assert.deepStrictEqual(staticPath('css/site.css', 'deny'), { segments: ['css', 'site.css'], directory: false });
    t.assert.deepStrictEqual(staticPath('docs/', 'deny'), { segments: ['docs'], directory: true });
    t.assert.deepStrictEqual(staticPath('', 'deny'), { segments: [], directory: true });
    t.assert.deepStrictEqual(staticPath('a b/ünïcode ☃.txt', 'deny'), { segments: ['a b', 'ünïcode ☃.txt'], directory: false });
  });

  test('dot segments are refused wherever they are (the router decoded %2e and %2f already)', (t: TestContext) => {
    for (const path of ['..', '../x', 'a/../x', 'a/..', '.', './x', 'a/./x', 'a/.', '../', '../../etc/passwd']) {
      t.assert.strictEqual(staticPath(path, 'allow'), undefined, path);
    }
  });

  test('backslashes, NUL and empty segments are refused', (t: TestContext) => {
    for (const path of ['..\\x', 'a\\b', '\\etc\\passwd', 'x\0.html', '\0', '/etc/passwd', 'a//b', '//', '/', 'a/b//']) {
      t.assert.strictEqual(staticPath(path, 'allow'), undefined, JSON.stringify(path));
    }
  });

  test('dotfiles and dot-directories: refused by default, served with allow', (t: TestContext) => {
    for (const path of ['.env', '.git/config', 'a/.hidden/b.txt', '.well-known/']) {
      t.assert.strictEqual(staticPath(path, 'deny'), undefined, path);
      t.assert.notStrictEqual(staticPath(path, 'allow'), undefined, path);
    }
    // a dot inside a name is no dotfile
    t.assert.deepStrictEqual(staticPath('app.3f9a.js', 'deny'), { segments: ['app.3f9a.js'], directory: false });
  });

  test('a segment that one more decoding or normalization would turn into a refused one is refused', (t: TestContext) => {
    // what the router hands over once it decoded %252e%252e, %25%32%65…, %25252f…
    for (const path of ['%2e%2e/secret', '%2E%2e', '.%2e', '%2e', '%252e%252e', '%2f', 'a%2fb', '%5c', '%00', '%2eenv', '%c0%ae%c0%ae']) {
      t.assert.strictEqual(staticPath(path, 'deny'), undefined, path);
    }
    // fullwidth dots and solidus: `..` and `/` under NFKC
    for (const path of ['．．', '．．/secret', 'a／b', '．env']) t.assert.strictEqual(staticPath(path, 'deny'), undefined, path);
  });

  test('a literal percent sign, or percent-encoded text, is a name', (t: TestContext) => {
    t.assert.deepStrictEqual(staticPath('100%.txt', 'deny'), { segments: ['100%.txt'], directory: false });
    t.assert.deepStrictEqual(staticPath('a%20b.txt', 'deny'), { segments: ['a%20b.txt'], directory: false });
    t.assert.deepStrictEqual(staticPath('%zz', 'deny'), { segments: ['%zz'], directory: false });
  });
});

describe('encodedPath', () => {
  test('each segment percent-encoded again, so that one more decoding gives it back exactly', (t: TestContext) => {
    t.assert.strictEqual(encodedPath(['a b', '100%.txt', 'x?y#z']), '/a%20b/100%25.txt/x%3Fy%23z');
    t.assert.strictEqual(decodeURIComponent(encodedPath(['100%.txt'])), '/100%.txt');
    t.assert.strictEqual(encodedPath([]), '');
  });
});
