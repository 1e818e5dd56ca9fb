import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, type TestContext, test } from 'node:test';
import { RequestQueue } from '../../../src/app/transport/request-queue.ts';

/** Resolves after the event loop's next turn (one check phase). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A stand-in request: the queue reads only `url` and `method`. */
function request(url: string, method = 'GET'): IncomingMessage {
  return { url, method } as IncomingMessage;
}

const response = {} as ServerResponse;

function recorder(): {
  served: string[];
  started: number[];
  handler: (req: IncomingMessage, res: ServerResponse, started?: number) => void;
} {
  const served: string[] = [];
  const started: number[] = [];
  return {
    served,
    started,
    handler: (req, _res, at) => {
      served.push(req.url ?? '');
      started.push(at ?? Number.NaN);
    },
  };
}

describe('RequestQueue', () => {
  test('idle resolves once every queued request has been handed over, and at once when none waits', async (t: TestContext) => {
    const { served, handler } = recorder();
    const queue = new RequestQueue(handler, { ownListener: true });
    await queue.idle();
    for (const url of ['/a', '/b']) queue.push(request(url), response);
    let idle = false;
    const waiting = queue.idle().then(() => {
      idle = true;
    });
    t.assert.strictEqual(idle, false);
    await waiting;
    t.assert.deepStrictEqual(served, ['/a', '/b'], 'handed over before idle resolved');
    t.assert.strictEqual(queue.size, 0);
  });

  test('while admission control sheds, a request that would wait past shedAfterMs is handed over as it arrives, with that wait', async (t: TestContext) => {
    const admission = { shedding: false, shedAfterMs: 5 };
    const handed: { url: string; expectedMs: number }[] = [];
    const queue = new RequestQueue(
      (req, _res, _at, _admitted, _backlog, expectedMs) => {
        handed.push({ url: req.url ?? '', expectedMs: expectedMs ?? 0 });
        const until = performance.now() + 2;
        while (performance.now() < until) {
          // 2 ms of work per request: the queue learns it
        }
      },
      { ownListener: true, admission },
    );
    for (let i = 0; i < 10; i++) queue.push(request(`/warm${i}`), response);
    await queue.idle();
    t.assert.ok(
      handed.every((h) => h.expectedMs === 0),
      'not shedding: every request queues',
    );
    handed.length = 0;
    admission.shedding = true;
    for (let i = 0; i < 10; i++) queue.push(request(`/spike${i}`), response);
    const atOnce = handed.map((h) => h.url);
    t.assert.ok(atOnce.length >= 6, `the ones behind the first few were handed over at once: ${atOnce.join(' ')}`);
    t.assert.ok(
      handed.every((h) => h.expectedMs > admission.shedAfterMs),
      'each with the wait it would have had',
    );
    t.assert.ok(!atOnce.includes('/spike0'), 'the first, with nobody ahead, queues');
    await queue.idle();
  });

  test('passes each request the backlog left behind it', async (t: TestContext) => {
    const backlogs: number[] = [];
    const queue = new RequestQueue((_req, _res, _at, _admitted, backlog) => backlogs.push(backlog ?? -1), { ownListener: true });
    for (const url of ['/a', '/b', '/c']) queue.push(request(url), response);
    await queue.idle();
    t.assert.deepStrictEqual(backlogs, [2, 1, 0]);
  });

  test('serves after the turn that read them, first in first out, each with the time it was read', async (t: TestContext) => {
    const { served, started, handler } = recorder();
    const queue = new RequestQueue(handler, { ownListener: true });
    const before = performance.now();
    for (const url of ['/a', '/b', '/c']) queue.push(request(url), response);
    t.assert.deepStrictEqual(served, [], 'nothing runs in the turn that read the requests');
    t.assert.strictEqual(queue.size, 3);
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a', '/b', '/c']);
    t.assert.strictEqual(queue.size, 0);
    for (const at of started) t.assert.ok(at >= before && at <= performance.now());
  });

  test('GET /health skips the queue', (t: TestContext) => {
    const { served, handler } = recorder();
    const queue = new RequestQueue(handler, { ownListener: true });
    queue.push(request('/work'), response);
    queue.push(request('/health'), response);
    queue.push(request('/health', 'POST'), response);
    t.assert.deepStrictEqual(served, ['/health']);
    t.assert.strictEqual(queue.size, 2);
  });

  test('a turn that accepted a connection serves nothing: the listener is emptied first', async (t: TestContext) => {
    const { served, handler } = recorder();
    const queue = new RequestQueue(handler, { ownListener: true });
    queue.push(request('/a'), response);
    queue.accepted();
    await nextTurn();
    t.assert.deepStrictEqual(served, [], 'a connection came in: read it before serving');
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a'], 'a turn without a new connection serves');
  });

  test('connections coming in every turn cannot starve the queue: it serves after 16 turns of draining', async (t: TestContext) => {
    const { served, handler } = recorder();
    const queue = new RequestQueue(handler, { ownListener: true });
    queue.push(request('/a'), response);
    let turns = 0;
    while (served.length === 0) {
      queue.accepted();
      await nextTurn();
      turns++;
    }
    t.assert.strictEqual(turns, 17);
  });

  /** A queue whose requests each take longer than a slice. */
  function slow(ownListener: boolean): { queue: RequestQueue; served: string[] } {
    const served: string[] = [];
    const queue = new RequestQueue(
      (req) => {
        served.push(req.url ?? '');
        const until = performance.now() + 6;
        while (performance.now() < until) {
          // busy on purpose
        }
      },
      { ownListener },
    );
    return { queue, served };
  }

  test('serves a slice at a time: requests left over wait for the next turn, after the loop polled again', async (t: TestContext) => {
    const { queue, served } = slow(true);
    for (const url of ['/a', '/b', '/c']) queue.push(request(url), response);
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a']);
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a', '/b']);
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a', '/b', '/c']);
  });

  test('handed connections (no listener of our own): a hand-off drains nothing, and they are served a slice at a time too', async (t: TestContext) => {
    const { queue, served } = slow(false);
    for (const url of ['/a', '/b']) queue.push(request(url), response);
    queue.accepted();
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a']);
    await nextTurn();
    t.assert.deepStrictEqual(served, ['/a', '/b']);
  });
});
