import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { RootGuard } from '../../../src/app/static/root-guard.ts';

function tree(t: TestContext): { root: string; outside: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-guard-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(join(root, 'd'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'a.txt'), 'inside');
  writeFileSync(join(root, 'd', 'x.txt'), 'inside');
  writeFileSync(join(outside, 'a.txt'), 'outside');
  writeFileSync(join(outside, 'x.txt'), 'outside');
  return { root, outside };
}

const check = (guard: RootGuard, file: string) => guard.inside(file, statSync(file));

test('a file inside, and a link inside to it, are inside; links out are not', async (t: TestContext) => {
  const { root, outside } = tree(t);
  symlinkSync('a.txt', join(root, 'alias.txt'));
  symlinkSync(join(outside, 'a.txt'), join(root, 'out.txt'));
  symlinkSync(outside, join(root, 'out-dir'));
  const guard = new RootGuard(root);
  t.assert.strictEqual(await check(guard, join(root, 'a.txt')), true);
  t.assert.strictEqual(await check(guard, join(root, 'alias.txt')), true);
  t.assert.strictEqual(await check(guard, join(root, 'out.txt')), false);
  t.assert.strictEqual(await check(guard, join(root, 'out-dir', 'x.txt')), false);
  // a sibling whose name starts like the root's is not inside it
  const evil = `${root}-evil`;
  mkdirSync(evil);
  writeFileSync(join(evil, 'x.txt'), 'evil');
  symlinkSync(evil, join(root, 'evil'));
  t.assert.strictEqual(await check(guard, join(root, 'evil', 'x.txt')), false);
});

test('a remembered file replaced by a link out, or reached through a replaced directory, is checked again', async (t: TestContext) => {
  const { root, outside } = tree(t);
  const guard = new RootGuard(root);
  const file = join(root, 'a.txt');
  t.assert.strictEqual(await check(guard, file), true);
  t.assert.strictEqual(await check(guard, file), true, 'remembered');
  rmSync(file);
  symlinkSync(join(outside, 'a.txt'), file);
  t.assert.strictEqual(await check(guard, file), false);
  const nested = join(root, 'd', 'x.txt');
  t.assert.strictEqual(await check(guard, nested), true);
  renameSync(join(root, 'd'), join(root, 'd-old'));
  symlinkSync(outside, join(root, 'd'));
  t.assert.strictEqual(await check(guard, nested), false);
});
