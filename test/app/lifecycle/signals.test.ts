import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectionRefused, httpRequest } from '../../helpers/http.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/standalone/signal-app.ts', import.meta.url));

interface Child {
  process: ChildProcess;
  lines: string[];
  /** Resolves once a line equal to `text` (or, for a RegExp, matching it) was printed. */
  waitForLine(text: string | RegExp): Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(mode: string, budgetMs?: number): Child {
  const child = spawn(process.execPath, [FIXTURE, mode, ...(budgetMs === undefined ? [] : [String(budgetMs)])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exit = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  return {
    process: child,
    lines,
    exit,
    waitForLine(text) {
      const match = (line: string) => (typeof text === 'string' ? line === text : text.test(line));
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        exit.then(() => reject(new Error(`exited before printing ${text}; printed: ${lines.join(' | ')}`)));
      });
    },
  };
}

async function portOf(child: Child): Promise<number> {
  return (JSON.parse(await child.waitForLine(/^\{"port":\d+\}$/)) as { port: number }).port;
}

describe('signals (standalone App in a child process)', () => {
  test('SIGTERM: serving stops, the hooks run in order, listen() resolves and the process exits 0', async (t) => {
    const child = start('ordered');
    t.after(() => child.process.kill('SIGKILL'));
    const port = await portOf(child);
    assert.equal((await httpRequest(port, '/health')).status, 200);
    child.process.kill('SIGTERM');
    const { code, signal } = await child.exit;
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.deepEqual(child.lines.slice(1), ['hook 1 aborted=false', 'hook 2', 'listen resolved']);
    assert.equal(await connectionRefused(port), true);
  });

  test('SIGINT does the same', async (t) => {
    const child = start('ordered');
    t.after(() => child.process.kill('SIGKILL'));
    await portOf(child);
    child.process.kill('SIGINT');
    assert.deepEqual(await child.exit, { code: 0, signal: null });
    assert.deepEqual(child.lines.slice(1), ['hook 1 aborted=false', 'hook 2', 'listen resolved']);
  });

  test('a second signal during a slow hook exits at once', async (t) => {
    const child = start('slow');
    t.after(() => child.process.kill('SIGKILL'));
    await portOf(child);
    child.process.kill('SIGTERM');
    await child.waitForLine('slow hook started');
    child.process.kill('SIGTERM');
    const { code } = await child.exit;
    assert.equal(code, 128 + 15, 'exits with the signal’s code, not the budget’s 1');
    assert.equal(child.lines.includes('hook 2'), false);
    assert.equal(child.lines.includes('listen resolved'), false);
  });

  test('a second SIGINT exits with 130', async (t) => {
    const child = start('slow');
    t.after(() => child.process.kill('SIGKILL'));
    await portOf(child);
    child.process.kill('SIGINT');
    await child.waitForLine('slow hook started');
    child.process.kill('SIGINT');
    assert.equal((await child.exit).code, 130);
  });

  test('a hook that never ends: the process exits by the budget, with code 1', async (t) => {
    const child = start('slow', 300);
    t.after(() => child.process.kill('SIGKILL'));
    await portOf(child);
    const started = performance.now();
    child.process.kill('SIGTERM');
    const { code } = await child.exit;
    assert.ok(performance.now() - started < 5_000);
    assert.equal(code, 1);
    assert.equal(child.lines.includes('hook 2'), false, 'hooks after the deadline are skipped');
  });

  test('a failing hook: the later hooks still run and the exit code is 1', async (t) => {
    const child = start('failing');
    t.after(() => child.process.kill('SIGKILL'));
    await portOf(child);
    child.process.kill('SIGTERM');
    const { code } = await child.exit;
    assert.equal(code, 1);
    assert.deepEqual(child.lines.slice(1), ['hook 1 aborted=false', 'hook 2', 'listen resolved']);
  });
});
