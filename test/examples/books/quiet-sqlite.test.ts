import { spawnSync } from 'node:child_process';
import { type TestContext, test } from 'node:test';
import { withoutSqliteWarning } from '../../../examples/books/database/quiet-sqlite.ts';

test("node:sqlite's experimental warning (Node 22) is dropped while it loads; other warnings pass", async (t: TestContext) => {
  const heard: string[] = [];
  const listener = (w: Error) => heard.push(w.message);
  process.on('warning', listener);
  t.after(() => process.off('warning', listener));
  const emit = process.emitWarning;
  const value = await withoutSqliteWarning(async () => {
    process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
    process.emitWarning('something else', 'Warning');
    return 42;
  });
  await new Promise((r) => setImmediate(r));
  t.assert.strictEqual(value, 42);
  t.assert.deepStrictEqual(heard, ['something else']);
  t.assert.strictEqual(process.emitWarning, emit, 'process.emitWarning is restored');
  await t.assert.rejects(
    withoutSqliteWarning(() => Promise.reject(new Error('load failed'))),
    /load failed/,
  );
  t.assert.strictEqual(process.emitWarning, emit, 'restored after a failure too');
});

const node24 = Number(process.versions.node.split('.')[0]) >= 24;

test('Node 24 loads node:sqlite without any warning', { skip: node24 ? false : 'Node 22 warns: see the test above' }, (t: TestContext) => {
  const run = spawnSync(process.execPath, ['-e', "require('node:sqlite')"], { encoding: 'utf8' });
  t.assert.strictEqual(run.status, 0);
  t.assert.strictEqual(run.stderr, '');
});
