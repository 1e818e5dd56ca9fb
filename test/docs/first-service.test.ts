import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { App } from '../../src/index.ts';
import { sink } from '../helpers/sink.ts';

// The first-service guide's walk-through must work as printed: its service and YAML blocks are run here.
const root = resolve(import.meta.dirname, '../..');
const guide = readFileSync(join(root, 'docs/guides/first-service.md'), 'utf8');
const section = guide.slice(guide.indexOf('## A service by hand'), guide.indexOf("## The service's own settings"));
const block = (lang: string) => {
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(match, `a ${lang} block in the walk-through`);
  return match[1]!;
};
// Inside the repository, so that `import … from 'flotilla'` resolves to this package (self-reference).
const dir = mkdtempSync(join(root, 'test', '.readme-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'service.ts'), block('ts'));
writeFileSync(join(dir, 'app.yaml'), block('yaml'));

test('the walk-through service answers as described', async () => {
  const { default: setup } = (await import(pathToFileURL(join(dir, 'service.ts')).href)) as { default: (app: App) => void };
  const app = new App({ port: 0 }, { logStream: sink(), handleSignals: false });
  setup(app);
  const list = await app.inject('/books?page=1&limit=1');
  assert.deepEqual(list.json(), { data: [{ id: 1, title: 'The Dispossessed' }], total: 2, page: 1, limit: 1, total_pages: 2 });
  assert.equal((await app.inject('/books/2')).json().title, 'Invisible Cities');
  const missing = await app.inject('/books/9');
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().detail, 'no such book');
  assert.equal((await app.inject('/health')).statusCode, 200);
  await app.close();
});

test('the walk-through YAML is valid and `flotilla openapi` documents the routes', () => {
  const out = execFileSync(
    process.execPath,
    ['--conditions=source', join(root, 'src/cli/main.ts'), 'openapi', '--config', join(dir, 'app.yaml')],
    {
      encoding: 'utf8',
    },
  );
  const doc = JSON.parse(out) as { paths: Record<string, unknown> };
  assert.ok('/books' in doc.paths && '/books/{id}' in doc.paths);
});
