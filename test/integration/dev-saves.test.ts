import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { get, tempFiles } from '../helpers/cluster.ts';
import { Dev } from '../helpers/dev.ts';

/**
 * `flotilla dev` sees every way a file is saved: in place, by writing a
 * temporary file and renaming it over the old one (what most editors do),
 * `sed -i`, a new file in a new folder (then edited), and a delete. Each save
 * is one restart, whose log line names the file the user saved, never an
 * editor's temporary or swap file.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** `GET /hello` → `{ answer }`; `answerFrom` imports the answer from a module instead of a literal. */
function service(answer: string, answerFrom?: string): string {
  const value = answerFrom === undefined ? `'${answer}'` : 'imported';
  return [
    `import { defineService } from '${INDEX}';`,
    answerFrom === undefined ? '' : `import { answer as imported } from '${answerFrom}';`,
    'export default defineService((app) => {',
    `  app.registerController({ routes: () => [{ method: 'GET', path: '/hello', handler: () => ({ answer: ${value} }) }] });`,
    '});',
    '',
  ].join('\n');
}

const APP_YAML = ['serviceName: dev-saves', 'host: 127.0.0.1', 'port: 0', 'service: ./service.ts', 'metrics:', '  port: 0', ''].join('\n');

async function answer(port: number): Promise<string> {
  const reply = await get(port, '/hello');
  return reply.status === 200 ? (JSON.parse(reply.body) as { answer: string }).answer : `status ${reply.status}`;
}

test('flotilla dev restarts once per save, whatever the way of saving, and names the file saved', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': service('one'), 'app.yaml': APP_YAML });
  const file = (name: string) => join(dir, name);
  const dev = new Dev(t, dir);
  const port = Number((await dev.until(() => /^ {2}API\s+http:\/\/127\.0\.0\.1:(\d+)\/$/m.exec(dev.stdout) ?? undefined, 'the banner'))[1]);
  await dev.untilCount(/primary part of the service started|its thread ends/, 1, "the primary's part of the service");
  await dev.untilCount(/watching for changes/, 1, 'the watcher ready');

  let saves = 0;
  /** Saves with `save`, then waits for the restart it causes; returns the file its log line names. */
  const restartFor = async (what: string, save: () => void, expected?: string): Promise<string> => {
    save();
    saves++;
    const lines = await dev.untilCount(/ changed: restarting the worker/, saves, `the restart for ${what}`);
    await dev.untilCount(/reload: done|reload failed/, saves, `the reload for ${what}`);
    if (expected !== undefined) {
      for (let tries = 0; (await answer(port)) !== expected; tries++) {
        if (tries > 200) t.assert.fail(`${what}: still not answering '${expected}'${dev.tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return /INFO: (\S+) changed: restarting/.exec(lines.at(-1) ?? '')?.[1] ?? '';
  };

  t.assert.strictEqual(await answer(port), 'one');

  t.assert.strictEqual(await restartFor('in place', () => writeFileSync(file('service.ts'), service('two')), 'two'), 'service.ts');

  // an editor's safe write: a swap file, Vim's probe, a backup, a temporary copy renamed over the file
  const editorSave = () => {
    writeFileSync(file('.service.ts.swp'), 'swap');
    writeFileSync(file('4913'), '');
    rmSync(file('4913'));
    writeFileSync(file('service.ts~'), service('two'));
    writeFileSync(file('service.ts___jb_tmp___'), service('three'));
    renameSync(file('service.ts___jb_tmp___'), file('service.ts'));
  };
  t.assert.strictEqual(await restartFor('write-temp-then-rename', editorSave, 'three'), 'service.ts');

  const sed = () => execFileSync('sed', ['-i', 's/three/four/', file('service.ts')]);
  t.assert.strictEqual(await restartFor('sed -i', sed, 'four'), 'service.ts');

  // a new file in a new folder, then the service using it, then an edit of it in place
  const newFile = () => {
    mkdirSync(file('lib/deep'), { recursive: true });
    writeFileSync(file('lib/deep/answer.ts'), "export const answer = 'five';\n");
  };
  t.assert.strictEqual(await restartFor('a new file in a new folder', newFile), join('lib', 'deep', 'answer.ts'));
  const useIt = () => writeFileSync(file('service.ts'), service('', './lib/deep/answer.ts'));
  t.assert.strictEqual(await restartFor('the service importing it', useIt, 'five'), 'service.ts');
  const editIt = () => writeFileSync(file('lib/deep/answer.ts'), "export const answer = 'six';\n");
  t.assert.strictEqual(await restartFor('an edit in the new folder', editIt, 'six'), join('lib', 'deep', 'answer.ts'));

  // a delete (the service no longer imports the file)
  writeFileSync(file('service.ts'), service('seven'));
  saves++;
  await dev.untilCount(/reload: done/, saves, 'the reload for seven');
  t.assert.strictEqual(await restartFor('a delete', () => rmSync(file('lib/deep/answer.ts'))), join('lib', 'deep', 'answer.ts'));
  t.assert.strictEqual(await answer(port), 'seven');

  // one restart per save, none for the editors' files on their own
  const restarts = dev.lines.filter((line) => / changed: restarting the worker/.test(line));
  t.assert.strictEqual(restarts.length, saves, restarts.join('\n'));
  t.assert.ok(!restarts.some((line) => /swp|4913|~|___jb_|sed[A-Za-z0-9]{6}/.test(line)), restarts.join('\n'));
});
