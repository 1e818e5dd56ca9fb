import { describe, type TestContext, test } from 'node:test';
import { encodeEvent, eventStream, type SseEvent } from '../../../src/app/streams/sse.ts';

async function collect(stream: AsyncIterable<string>, limit = 100): Promise<string[]> {
  const out: string[] = [];
  for await (const text of stream) {
    out.push(text);
    if (out.length >= limit) break;
  }
  return out;
}

describe('encodeEvent', () => {
  test('writes the fields in the wire format, data split on line breaks, objects as JSON', (t: TestContext) => {
    t.assert.strictEqual(encodeEvent({ data: 'hello' }), 'data: hello\n\n');
    t.assert.strictEqual(
      encodeEvent({ event: 'price', id: '7', retry: 500, data: { eur: 3 } }),
      'event: price\nid: 7\nretry: 500\ndata: {"eur":3}\n\n',
    );
    t.assert.strictEqual(encodeEvent({ data: 'a\nb\r\nc' }), 'data: a\ndata: b\ndata: c\n\n');
  });

  test('refuses an event or id that would break the framing', (t: TestContext) => {
    t.assert.throws(() => encodeEvent({ event: 'x\ndata: injected', data: 1 }), TypeError);
    t.assert.throws(() => encodeEvent({ id: 'a\rb', data: 1 }), TypeError);
    t.assert.throws(() => encodeEvent({ retry: -1, data: 1 }), TypeError);
  });
});

describe('eventStream', () => {
  test('opens with a comment, sends the events, ends with the source', async (t: TestContext) => {
    async function* source(): AsyncGenerator<SseEvent> {
      yield { data: 'one' };
      yield { data: 'two', id: '2' };
    }
    const out = await collect(eventStream(source(), {}, new AbortController().signal));
    t.assert.deepStrictEqual(out, [': connected\n\n', 'data: one\n\n', 'id: 2\ndata: two\n\n']);
  });

  test('sends heartbeats while the source is quiet', async (t: TestContext) => {
    let release = () => {};
    async function* source(): AsyncGenerator<SseEvent> {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      yield { data: 'late' };
    }
    const stream = eventStream(source(), { heartbeatMs: 20 }, new AbortController().signal);
    const out: string[] = [];
    for await (const text of stream) {
      out.push(text);
      if (out.filter((x) => x === ': heartbeat\n\n').length === 3) release();
    }
    t.assert.strictEqual(out.at(-1), 'data: late\n\n');
    t.assert.ok(out.filter((x) => x === ': heartbeat\n\n').length >= 3);
  });

  test('ends at once when draining starts, after the farewell, and closes the source', async (t: TestContext) => {
    let closed = false;
    async function* source(): AsyncGenerator<SseEvent> {
      try {
        yield { data: 'first' };
        await new Promise(() => {}); // a source that would never yield again
      } finally {
        closed = true;
      }
    }
    const drain = new AbortController();
    const out: string[] = [];
    for await (const text of eventStream(source(), { farewell: { event: 'bye', data: 'reconnect elsewhere' } }, drain.signal)) {
      out.push(text);
      if (text === 'data: first\n\n') drain.abort();
    }
    t.assert.deepStrictEqual(out, [': connected\n\n', 'data: first\n\n', 'event: bye\ndata: reconnect elsewhere\n\n']);
    // the source is asked to finish; a generator stuck in an await finishes once it resumes, which this one never does
    t.assert.strictEqual(closed, false);
  });

  test('a source that fails makes the stream fail', async (t: TestContext) => {
    async function* source(): AsyncGenerator<SseEvent> {
      yield { data: 'ok' };
      throw new Error('feed broke');
    }
    await t.assert.rejects(collect(eventStream(source(), {}, new AbortController().signal)), /feed broke/);
  });
});
