import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { devWatchPaths } from '../../src/cli/dev.ts';
import { type Change, SETTLE_MS, watchService } from '../../src/cli/watch.ts';
import { resolveConfig } from '../../src/config/validate.ts';
import { tempFiles } from '../helpers/cluster.ts';

/**
 * A project: `app.yaml` and `src/service.ts`; `flotilla dev`'s watcher on it with `also`, closed
 * after the test; `next()` resolves with the next change reported.
 */
async function watching(t: TestContext, also: (dir: string) => string[]) {
  const dir = tempFiles(t, { 'app.yaml': 'service: ./src/service.ts\n' });
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'service.ts'), 'export default () => {};\n');
  const changes: Change[] = [];
  let waiter: (() => void) | undefined;
  const watcher = watchService(
    { servicePath: join(dir, 'src', 'service.ts'), configFile: join(dir, 'app.yaml'), also: also(dir) },
    (change) => {
      changes.push(change);
      waiter?.();
    },
  );
  t.after(() => watcher.close());
  await watcher.ready;
  let seen = 0;
  const next = async (): Promise<Change> => {
    while (changes.length <= seen) await new Promise<void>((resolve) => (waiter = resolve));
    return changes[seen++]!;
  };
  return { dir, watcher, changes, next };
}

test('a save in a dev.watch folder beside the config file is a change naming the file', async (t: TestContext) => {
  const { dir, watcher, next } = await watching(t, (d) => [join(d, 'migrations')]);
  t.assert.deepStrictEqual(watcher.paths, [join(dir, 'src'), join(dir, 'migrations')]);
  // the folder does not exist yet: it is watched once it appears
  mkdirSync(join(dir, 'migrations'));
  writeFileSync(join(dir, 'migrations', '0001-books.sql'), 'CREATE TABLE books (id integer);\n');
  t.assert.deepStrictEqual(await next(), { file: join(dir, 'migrations', '0001-books.sql'), isConfig: false });
  writeFileSync(join(dir, 'migrations', '0001-books.sql'), 'CREATE TABLE books (id integer, title text);\n');
  t.assert.deepStrictEqual(await next(), { file: join(dir, 'migrations', '0001-books.sql'), isConfig: false });
});

test("a dev.watch folder's creation, editors' files in it, and files outside every watched tree are no change", async (t: TestContext) => {
  const { dir, changes, next } = await watching(t, (d) => [join(d, 'sql')]);
  mkdirSync(join(dir, 'sql'));
  writeFileSync(join(dir, 'sql', '.0002-authors.sql.swp'), 'swap');
  writeFileSync(join(dir, 'sql', '0002-authors.sql~'), 'backup');
  writeFileSync(join(dir, 'notes.txt'), 'outside');
  await sleep(SETTLE_MS * 4);
  t.assert.deepStrictEqual(changes, []);
  writeFileSync(join(dir, 'sql', '0002-authors.sql'), 'CREATE TABLE authors (id integer);\n');
  t.assert.deepStrictEqual(await next(), { file: join(dir, 'sql', '0002-authors.sql'), isConfig: false });
});

test('a dev.watch file is watched on its own; one inside the service directory is watched once', async (t: TestContext) => {
  const { dir, watcher, next } = await watching(t, (d) => [join(d, 'schema.graphql'), join(d, 'src', 'migrations')]);
  t.assert.deepStrictEqual(watcher.paths, [join(dir, 'src'), join(dir, 'schema.graphql')]);
  writeFileSync(join(dir, 'schema.graphql'), 'type Query { books: [String] }\n');
  t.assert.deepStrictEqual(await next(), { file: join(dir, 'schema.graphql'), isConfig: false });
  writeFileSync(join(dir, 'app.yaml'), 'service: ./src/service.ts\nport: 0\n');
  t.assert.deepStrictEqual(await next(), { file: join(dir, 'app.yaml'), isConfig: true });
});

test('dev.watch: `migrations` beside the config file by default, paths relative to the config file', (t: TestContext) => {
  t.assert.deepStrictEqual(devWatchPaths(resolveConfig({}), '/srv/app/config/app.yaml'), ['/srv/app/config/migrations']);
  t.assert.deepStrictEqual(
    devWatchPaths(resolveConfig({ dev: { watch: ['../db/migrations', '/etc/app/extra.sql'] } }), '/srv/app/config/app.yaml'),
    ['/srv/app/db/migrations', '/etc/app/extra.sql'],
  );
  t.assert.deepStrictEqual(devWatchPaths(resolveConfig({ dev: { watch: [] } }), '/srv/app/app.yaml'), []);
});
