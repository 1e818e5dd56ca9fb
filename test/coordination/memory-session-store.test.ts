import { type TestContext, test } from 'node:test';
import { newSessionId } from '../../src/app/sessions/session.ts';
import { MemorySessionStore, SESSION_ENTRY_BYTES, stringBytes } from '../../src/coordination/memory-session-store.ts';

const HOUR = 3_600_000;

/** What docs/guides/sessions.md says one session with a 32-character id and the data `{"visits":1}` costs. */
const ANONYMOUS_SESSION_BYTES = 186;

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

test('a session counts its entry, and its id and data as the heap stores them: 16 bytes and the characters, by 8', (t: TestContext) => {
  t.assert.strictEqual(SESSION_ENTRY_BYTES, 106);
  t.assert.strictEqual(stringBytes(''), 16);
  t.assert.strictEqual(stringBytes('x'), 24);
  t.assert.strictEqual(stringBytes('x'.repeat(8)), 24);
  t.assert.strictEqual(stringBytes('x'.repeat(9)), 32);
  t.assert.strictEqual(stringBytes(newSessionId()), 48);
  // Latin-1 takes one byte a character (not UTF-8's two for é); anything beyond, two for every character
  t.assert.strictEqual(stringBytes('é'.repeat(16)), 32);
  t.assert.strictEqual(stringBytes(`${'x'.repeat(15)}€`), 48);
  t.assert.strictEqual(stringBytes('😀'), 24);
});

test('bytes follow sets, replacements, deletes and sweeps', async (t: TestContext) => {
  const { sessions, advance } = store();
  const entry = SESSION_ENTRY_BYTES;
  await sessions.set('a', 'x'.repeat(10), HOUR); // 24 + 32
  await sessions.set('bb', '€', 2 * HOUR); // 24 + 24
  t.assert.strictEqual(sessions.bytes, entry + 24 + 32 + entry + 24 + 24);
  await sessions.set('a', 'y', HOUR);
  t.assert.strictEqual(sessions.bytes, entry + 24 + 24 + entry + 24 + 24);
  await sessions.delete('a');
  t.assert.strictEqual(sessions.bytes, entry + 48);
  advance(2 * HOUR);
  sessions.sweep();
  t.assert.strictEqual(sessions.bytes, 0);
  t.assert.strictEqual(sessions.size, 0);
  await sessions.close();
});

test('past maxBytes the sessions saved least recently go first, and the store says how many', async (t: TestContext) => {
  // each session: a 2-character id (24 bytes) and 98 characters of data (120) = 250 bytes with its entry; room for 10
  const size = SESSION_ENTRY_BYTES + 24 + 120;
  t.assert.strictEqual(size, 250);
  const { sessions, evicted, advance } = store(10 * size);
  const id = (i: number) => String(i).padStart(2, '0');
  for (let i = 0; i < 10; i++) await sessions.set(id(i), 'd'.repeat(98), HOUR);
  t.assert.strictEqual(sessions.bytes, 10 * size);
  t.assert.deepStrictEqual(evicted, []);

  // session 00 saved again: now the most recent; 01 is the oldest
  await sessions.set('00', 'd'.repeat(98), HOUR);
  for (let i = 10; i < 13; i++) await sessions.set(id(i), 'd'.repeat(98), HOUR);

  t.assert.strictEqual(sessions.size, 10);
  t.assert.ok(sessions.bytes <= 10 * size);
  for (const gone of ['01', '02', '03']) t.assert.strictEqual(await sessions.get(gone), undefined, gone);
  for (const kept of ['00', '04', '12']) t.assert.notStrictEqual(await sessions.get(kept), undefined, kept);
  t.assert.deepStrictEqual(evicted, [1], 'said once a minute at most: the first drop');

  advance(60_000);
  await sessions.set('13', 'd'.repeat(98), HOUR);
  t.assert.deepStrictEqual(evicted, [1, 3], 'a minute later, the drops since');
  await sessions.close();
});

test('a session larger than the whole budget is kept alone: the one just saved is never dropped', async (t: TestContext) => {
  const { sessions } = store(SESSION_ENTRY_BYTES + 24 + 72);
  await sessions.set('a', 'x'.repeat(50), HOUR);
  await sessions.set('b', 'y'.repeat(200), HOUR);
  t.assert.strictEqual(await sessions.get('a'), undefined);
  t.assert.strictEqual((await sessions.get('b'))?.data.length, 200);
  // the next save makes room from the oldest again: the large one goes
  await sessions.set('c', 'z', HOUR);
  t.assert.strictEqual(await sessions.get('b'), undefined);
  t.assert.strictEqual((await sessions.get('c'))?.data, 'z');
  await sessions.close();
});

test('evictions keep to the order of the last saves across floods, re-saves, deletes and sweeps', async (t: TestContext) => {
  const size = SESSION_ENTRY_BYTES + 24 + 24; // a 1-character id and data
  const { sessions, advance } = store(4 * size);
  const save = (id: string, ttl = HOUR) => sessions.set(id, 'd', ttl);
  for (const id of 'abcd') await save(id);
  await save('e'); // a goes
  await save('b'); // b is now the most recent
  await save('f'); // c goes
  await sessions.delete('d');
  await save('g', 1); // room for it: nothing goes
  await save('h'); // e goes
  t.assert.deepStrictEqual(await held(), ['b', 'f', 'g', 'h']);
  advance(1);
  sessions.sweep(); // g expired
  await save('i');
  await save('j'); // b goes
  t.assert.deepStrictEqual(await held(), ['f', 'h', 'i', 'j']);
  await sessions.close();

  async function held() {
    const out: string[] = [];
    for (const id of 'abcdefghij') if ((await sessions.get(id)) !== undefined) out.push(id);
    return out;
  }
});

test('a flood of anonymous sessions holds what sessions.memoryBytes allows, at the documented size, and no more', async (t: TestContext) => {
  const memoryBytes = 1_048_576; // the smallest sessions.memoryBytes
  const { sessions, evicted } = store(memoryBytes);
  const data = JSON.stringify({ visits: 1 });
  const first = newSessionId();
  await sessions.set(first, data, HOUR);
  t.assert.strictEqual(sessions.bytes, ANONYMOUS_SESSION_BYTES);
  for (let i = 1; i < 20_000; i++) await sessions.set(newSessionId(), data, HOUR);
  const fits = Math.floor(memoryBytes / ANONYMOUS_SESSION_BYTES);
  t.assert.strictEqual(fits, 5_637);
  t.assert.strictEqual(sessions.size, fits);
  t.assert.strictEqual(sessions.bytes, fits * ANONYMOUS_SESSION_BYTES);
  t.assert.ok(sessions.bytes <= memoryBytes);
  t.assert.strictEqual(await sessions.get(first), undefined, 'the oldest went first');
  t.assert.deepStrictEqual(evicted, [1], 'the first drop said at once, the rest within the minute left unsaid');
  await sessions.close();
});
