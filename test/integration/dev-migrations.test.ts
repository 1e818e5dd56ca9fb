import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { get, tempFiles } from '../helpers/cluster.ts';
import { Dev } from '../helpers/dev.ts';

/**
 * `flotilla dev` on a project laid out as `flotilla init` writes it (`app.yaml`
 * at the root, the service in `src/`) with its SQL files in `migrations/`
 * beside the config file, outside the service's folder: a saved `.sql` file
 * replaces the worker, and the primary's `beforeServe` hook migrates it.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** `GET /tables` → the tables of the project's SQLite file; `beforeServe`: `migrate()` on `migrations/`. */
function service(file: string): string {
  return `import { DatabaseSync } from 'node:sqlite';
import { defineService, migrate } from '${INDEX}';

export default defineService((app) => {
  const db = new DatabaseSync(${JSON.stringify(file)}, { timeout: 5_000 });
  app.onShutdown(() => db.close());
  app.beforeServe(async (signal) => {
    await migrate({ dir: new URL('../migrations/', import.meta.url), database: db, logger: app.logger, signal });
  });
  const tables = () => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name);
  app.registerController({ routes: () => [{ method: 'GET', path: '/tables', handler: () => tables() }] });
});
`;
}

const APP_YAML = [
  'serviceName: dev-migrations',
  'host: 127.0.0.1',
  'port: 0',
  'service: ./src/service.ts',
  'metrics:',
  '  port: 0',
  '',
].join('\n');

async function tables(port: number): Promise<string[]> {
  const reply = await get(port, '/tables');
  return reply.status === 200 ? (JSON.parse(reply.body) as string[]) : [];
}

test('flotilla dev: a .sql file saved in migrations/ beside the config file restarts the worker, and the primary applies it', async (t: TestContext) => {
  const dir = tempFiles(t, { 'app.yaml': APP_YAML });
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'service.ts'), service(join(dir, 'app.sqlite')));
  mkdirSync(join(dir, 'migrations'));
  writeFileSync(join(dir, 'migrations', '0001-notes.sql'), 'CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL);\n');

  const dev = new Dev(t, dir);
  const port = Number((await dev.until(() => /^ {2}API\s+http:\/\/127\.0\.0\.1:(\d+)\/$/m.exec(dev.stdout) ?? undefined, 'the banner'))[1]);
  await dev.untilCount(/migration 0001-notes\.sql applied/, 1, 'the first migration');
  await dev.untilCount(/watching for changes/, 1, 'the watcher ready');
  t.assert.deepStrictEqual(await tables(port), ['notes', 'schema_migrations']);

  writeFileSync(join(dir, 'migrations', '0002-authors.sql'), 'CREATE TABLE authors (id integer PRIMARY KEY);\n');
  const [restart] = await dev.untilCount(/ changed: restarting the worker/, 1, 'the restart for the saved .sql file');
  t.assert.match(
    restart ?? '',
    new RegExp(`INFO: ${join('migrations', '0002-authors.sql').replace(/[.\\]/g, '\\$&')} changed: restarting`),
  );
  await dev.untilCount(/reload: done/, 1, 'the reload');
  await dev.untilCount(/migration 0002-authors\.sql applied/, 1, 'the new migration applied by the new service thread');
  for (let tries = 0; !(await tables(port)).includes('authors'); tries++) {
    if (tries > 200) t.assert.fail(`the worker does not see the authors table${dev.tail()}`);
    await sleep(25);
  }
  t.assert.deepStrictEqual(await tables(port), ['authors', 'notes', 'schema_migrations']);
  t.assert.strictEqual(dev.lines.filter((line) => /migration 0001-notes\.sql applied/.test(line)).length, 1, 'applied once');
});
