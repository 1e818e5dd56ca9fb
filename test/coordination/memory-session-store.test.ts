import { type TestContext, test } from 'node:test';
import { MemorySessionStore } from '../../src/coordination/memory-session-store.ts';

const HOUR = 3_600_000;

/** A store on a clock the test moves, which records what it says it dropped. */
function store(maxBytes?: number) {
  let now = 1_000_000;
  const evicted: number[] = [];
  const sessions = new MemorySessionStore({
    ...(maxBytes === undefined ? {} : { maxBytes }),
    onEvicted: (count) => evicted.push(count),
    now: () => now,
  });
  return { sessions, evicted, advance: (ms: number) => (now += ms) };
}

test('a session is read back until it expires, then is gone', async (t: TestContext) => {
  const { sessions, advance } = store();
  await sessions.set('a', '{"user":1}', HOUR);
  t.assert.deepStrictEqual(await sessions.get('a'), { data: '{"user":1}', ttlLeftMs: HOUR });
  advance(HOUR);
  t.assert.strictEqual(await sessions.get('a'), undefined);
  t.assert.strictEqual(sessions.bytes, 0, 'an expired session read is dropped, its bytes with it');
  await sessions.close();
});

test('bytes follow sets, replacements, deletes and sweeps', async (t: TestContext) => {
  const { sessions, advance } = store();
  await sessions.set('a', 'x'.repeat(10), HOUR);
  await sessions.set('bb', 'é', 2 * HOUR); // 2 bytes in UTF-8
  t.assert.strictEqual(sessions.bytes, 1 + 10 + 2 + 2);
  await sessions.set('a', 'y', HOUR);
  t.assert.strictEqual(sessions.bytes, 1 + 1 + 2 + 2);
  await sessions.delete('a');
  t.assert.strictEqual(sessions.bytes, 4);
  advance(2 * HOUR);
  sessions.sweep();
  t.assert.strictEqual(sessions.bytes, 0);
  t.assert.strictEqual(sessions.size, 0);
  await sessions.close();
});

test('past maxBytes the sessions saved least recently go first, and the store says how many', async (t: TestContext) => {
  // each session: a 2-byte id and 98 bytes of data = 100 bytes; room for 10
  const { sessions, evicted, advance } = store(1_000);
  const id = (i: number) => String(i).padStart(2, '0');
  for (let i = 0; i < 10; i++) await sessions.set(id(i), 'd'.repeat(98), HOUR);
  t.assert.strictEqual(sessions.bytes, 1_000);
  t.assert.deepStrictEqual(evicted, []);

  // session 00 saved again: now the most recent; 01 is the oldest
  await sessions.set('00', 'd'.repeat(98), HOUR);
  for (let i = 10; i < 13; i++) await sessions.set(id(i), 'd'.repeat(98), HOUR);

  t.assert.strictEqual(sessions.size, 10);
  t.assert.ok(sessions.bytes <= 1_000);
  for (const gone of ['01', '02', '03']) t.assert.strictEqual(await sessions.get(gone), undefined, gone);
  for (const kept of ['00', '04', '12']) t.assert.notStrictEqual(await sessions.get(kept), undefined, kept);
  t.assert.deepStrictEqual(evicted, [1], 'said once a minute at most: the first drop');

  advance(60_000);
  await sessions.set('13', 'd'.repeat(98), HOUR);
  t.assert.deepStrictEqual(evicted, [1, 3], 'a minute later, the drops since');
  await sessions.close();
});

test('a session larger than the whole budget is kept alone: the one just saved is never dropped', async (t: TestContext) => {
  const { sessions } = store(100);
  await sessions.set('a', 'x'.repeat(50), HOUR);
  await sessions.set('b', 'y'.repeat(200), HOUR);
  t.assert.strictEqual(await sessions.get('a'), undefined);
  t.assert.strictEqual((await sessions.get('b'))?.data.length, 200);
  await sessions.close();
});
