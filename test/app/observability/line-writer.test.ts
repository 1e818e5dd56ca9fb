import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FILE_BATCH_BYTES, FLUSH_MS, LineWriter, PIPE_BUF, truncateLine } from '../../../src/app/observability/line-writer.ts';
import { openFifo } from '../../../tools/cluster-process.ts';

const CHILD = fileURLToPath(new URL('../../fixtures/logging/line-writer-child.ts', import.meta.url));

/** A writer on the write end of a fresh FIFO (closed after the test): a pipe, as stdout is in a container. */
function pipeWriter(t: TestContext): LineWriter {
  const { reader, writeFd } = openFifo();
  t.after(() => {
    reader.destroy();
    fs.closeSync(writeFd);
  });
  return new LineWriter(writeFd);
}

/** A writer on a fresh regular file (removed after the test). */
function fileWriter(t: TestContext): LineWriter {
  const dir = fs.mkdtempSync(join(tmpdir(), 'flotilla-lw-'));
  const fd = fs.openSync(join(dir, 'log'), 'a');
  t.after(() => {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return new LineWriter(fd);
}

type WriteSync = (fd: number, data: string | Buffer, offset?: number, length?: number) => number;

/**
 * Replaces `fs.writeSync` for this test: every write(2) the writer issues is
 * recorded (as bytes) instead of reaching the descriptor. `accept` decides
 * how many bytes of each call are taken, or throws (EAGAIN, EPIPE…).
 */
function recordWrites(t: TestContext, accept: (chunk: Buffer, call: number) => number = (chunk) => chunk.length): Buffer[] {
  const writes: Buffer[] = [];
  let calls = 0;
  const writeSync: WriteSync = (_fd, data, offset = 0, length) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data.subarray(offset, offset + (length ?? data.length - offset));
    const taken = accept(bytes, calls++);
    writes.push(bytes.subarray(0, taken));
    return taken;
  };
  t.mock.method(fs, 'writeSync', writeSync);
  return writes;
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

/** `n` JSON lines of ~20 bytes to ~2.5 KiB, some with multi-byte characters (`é€`: 5 bytes). */
function someLines(n: number): string[] {
  const pad = (i: number) => (i % 7 === 0 ? 'é€'.repeat(((i * 131) % 2500) / 5) : 'x'.repeat((i * 131) % 2500));
  return Array.from({ length: n }, (_, i) => `${JSON.stringify({ i, pad: pad(i) })}\n`);
}

test('on a pipe, lines are batched into writes of whole lines, each at most PIPE_BUF bytes', (t: TestContext) => {
  const writer = pipeWriter(t);
  t.assert.strictEqual(writer.shared, true);
  t.assert.strictEqual(writer.maxWriteBytes, PIPE_BUF);
  const writes = recordWrites(t);
  const lines = someLines(2000);
  for (const line of lines) writer.write(line);
  writer.flushSync();

  t.assert.strictEqual(Buffer.concat(writes).toString(), lines.join(''), 'every line, in order, once');
  for (const w of writes) {
    t.assert.ok(w.length <= PIPE_BUF, `a write of ${w.length} bytes`);
    t.assert.strictEqual(w.at(-1), 0x0a, 'a write ends with a whole line');
  }
  t.assert.ok(writes.length < lines.length / 2, `${writes.length} writes for ${lines.length} lines: batched`);
  const full = writes.filter((w) => w.length > PIPE_BUF - 2600).length;
  t.assert.ok(full >= writes.length - 1, 'a batch is written only when the next line would not fit');
});

test('on a regular file, batches of whole lines go up to 64 KiB', (t: TestContext) => {
  const writer = fileWriter(t);
  t.assert.strictEqual(writer.shared, false);
  t.assert.strictEqual(writer.maxWriteBytes, FILE_BATCH_BYTES);
  const writes = recordWrites(t);
  const lines = someLines(2000);
  for (const line of lines) writer.write(line);
  writer.flushSync();
  t.assert.strictEqual(Buffer.concat(writes).toString(), lines.join(''));
  t.assert.ok(writes.every((w) => w.length <= FILE_BATCH_BYTES && w.at(-1) === 0x0a));
  t.assert.ok(
    writes.some((w) => w.length > PIPE_BUF),
    'batches larger than PIPE_BUF',
  );
});

test('pending lines are written 100 ms after the first one', (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const writer = pipeWriter(t);
  const writes = recordWrites(t);
  writer.write('{"a":1}\n');
  t.mock.timers.tick(FLUSH_MS / 2);
  writer.write('{"a":2}\n');
  t.mock.timers.tick(FLUSH_MS / 2 - 1);
  t.assert.strictEqual(writes.length, 0, 'still pending');
  t.mock.timers.tick(1);
  t.assert.deepStrictEqual(
    writes.map((w) => w.toString()),
    ['{"a":1}\n{"a":2}\n'],
    'one write, 100 ms after the first line',
  );
  t.mock.timers.tick(FLUSH_MS * 3);
  t.assert.strictEqual(writes.length, 1, 'nothing more to write');
});

test('a write that stops part-way goes on where it stopped; EAGAIN (a full non-blocking pipe) waits and retries', (t: TestContext) => {
  const writer = fileWriter(t);
  const writes = recordWrites(t, (chunk, call) => {
    if (call % 5 === 1) throw errno('EAGAIN');
    return Math.min(chunk.length, 1000);
  });
  const lines = someLines(300);
  for (const line of lines) writer.write(line);
  writer.flushSync();
  t.assert.strictEqual(Buffer.concat(writes).toString(), lines.join(''), 'nothing lost, nothing repeated');
});

test('once nobody reads the pipe (EPIPE), lines are dropped without an error reaching the logging code', (t: TestContext) => {
  const writer = pipeWriter(t);
  let calls = 0;
  recordWrites(t, () => {
    calls++;
    throw errno('EPIPE');
  });
  for (const line of someLines(100)) writer.write(line);
  writer.flushSync();
  t.assert.strictEqual(calls, 1, 'no write is attempted after EPIPE');
});

test('on a pipe, a line longer than PIPE_BUF is cut into a valid JSON line marked "truncated", keeping its short fields', (t: TestContext) => {
  const writer = pipeWriter(t);
  const writes = recordWrites(t);
  const stack = `Error: boom\n${'    at frame (file.ts:1:1) ✓\n'.repeat(400)}`;
  const long = `${JSON.stringify({ level: 'error', time: '2030-01-01T00:00:00.000Z', requestId: 'r-1', err: { type: 'Error', message: 'boom', stack }, msg: 'request failed' })}\n`;
  writer.write('{"before":1}\n');
  writer.write(long);
  writer.write('{"after":1}\n');
  writer.flushSync();

  const out = Buffer.concat(writes).toString().split('\n').slice(0, -1);
  t.assert.strictEqual(out.length, 3, 'three lines, in order');
  t.assert.ok(writes.every((w) => w.length <= PIPE_BUF));
  const line = JSON.parse(out[1] ?? '') as Record<string, unknown> & { err: { stack: string; message: string } };
  t.assert.strictEqual(Buffer.byteLength(`${out[1]}\n`) <= PIPE_BUF, true);
  t.assert.strictEqual(line['truncated'], true);
  t.assert.strictEqual(line['level'], 'error');
  t.assert.strictEqual(line['msg'], 'request failed');
  t.assert.strictEqual(line['requestId'], 'r-1');
  t.assert.strictEqual(line.err.message, 'boom');
  t.assert.ok(line.err.stack.endsWith('…') && stack.startsWith(line.err.stack.slice(0, -1)), 'the stack is cut, not rewritten');
  t.assert.ok(line.err.stack.length > 3000, 'as much of it as fits');
});

test('a line that cannot fit by cutting strings keeps its top-level fields; one that is not JSON becomes a msg', (t: TestContext) => {
  const numbers = `${JSON.stringify({ level: 'info', msg: 'many numbers', data: Array.from({ length: 2000 }, (_, i) => i) })}\n`;
  const fitted = JSON.parse(truncateLine(numbers, PIPE_BUF)) as Record<string, unknown>;
  t.assert.deepStrictEqual(fitted, { level: 'info', msg: 'many numbers', truncated: true });
  const text = truncateLine(`${'not json '.repeat(1000)}\n`, PIPE_BUF);
  t.assert.ok(Buffer.byteLength(text) <= PIPE_BUF && text.endsWith('}\n'));
  const parsed = JSON.parse(text) as { msg: string; truncated: boolean };
  t.assert.ok(parsed.truncated && parsed.msg.startsWith('not json not json') && parsed.msg.endsWith('…'));
  const emoji = `${JSON.stringify({ msg: '😀'.repeat(3000) })}\n`;
  const cut = truncateLine(emoji, PIPE_BUF);
  t.assert.ok(Buffer.byteLength(cut) <= PIPE_BUF && !cut.includes('\\ud'), 'no half surrogate pair');
});

test('on a regular file, a line longer than 64 KiB is written whole, on its own, in order', (t: TestContext) => {
  const writer = fileWriter(t);
  const writes = recordWrites(t);
  const long = `${JSON.stringify({ big: 'y'.repeat(100_000) })}\n`;
  writer.write('{"before":1}\n');
  writer.write(long);
  writer.write('{"after":1}\n');
  writer.flushSync();
  t.assert.deepStrictEqual(
    writes.map((w) => w.toString()),
    ['{"before":1}\n', long, '{"after":1}\n'],
  );
});

for (const ending of ['exit', 'natural'] as const) {
  test(`processes sharing one real pipe: every line arrives whole, the pending ones at exit too (${ending})`, async (t: TestContext) => {
    const { reader, writeFd } = openFifo();
    t.after(() => reader.destroy());
    const CHILDREN = 4;
    const LINES = 3000;
    const children = Array.from({ length: CHILDREN }, (_, id) =>
      spawn(process.execPath, ['--conditions=source', CHILD, String(id), String(LINES), ending], {
        stdio: ['ignore', writeFd, 'inherit'],
      }),
    );
    fs.closeSync(writeFd);
    const closed = new Promise((resolve) => reader.once('close', resolve));
    let text = '';
    reader.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    const codes = await Promise.all(children.map((c) => new Promise((resolve) => c.once('exit', resolve))));
    await closed;
    t.assert.deepStrictEqual(codes, Array(CHILDREN).fill(0));

    const malformed: string[] = [];
    const seen = new Map<number, number>();
    for (const raw of text.split('\n').slice(0, -1)) {
      let line: { child: number; i: number; msg: string; truncated?: boolean };
      try {
        line = JSON.parse(raw);
      } catch {
        malformed.push(raw.slice(0, 200));
        continue;
      }
      if (line.msg === 'child line') t.assert.strictEqual(line.i, seen.get(line.child) ?? 0, 'in order');
      else t.assert.strictEqual(line.truncated, true, 'the long last line, cut to fit');
      seen.set(line.child, line.i + 1);
    }
    t.assert.ok(text.endsWith('\n'));
    t.assert.deepStrictEqual(malformed, []);
    t.assert.deepStrictEqual(
      [...seen.entries()].sort(([a], [b]) => a - b),
      Array.from({ length: CHILDREN }, (_, id) => [id, LINES + 1]),
      'every line of every child',
    );
  });
}
