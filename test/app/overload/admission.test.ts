import { Agent, request } from 'node:http';
import { describe, type TestContext, test } from 'node:test';
import { Admission } from '../../../src/app/overload/admission.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET on one of `agent`'s keep-alive connections. */
function get(agent: Agent, port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Busy-waits `ms`: a CPU-bound request. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/** Requests from every client at once on their keep-alive connections: in the loop, they wait behind each other. */
function round(agent: Agent, port: number, path: string): Promise<Answer[]> {
  return Promise.all(Array.from({ length: CLIENTS }, () => get(agent, port, path)));
}

/**
 * An open loop: `send` is called on schedule, every `everyMs` of wall time, whether or not earlier
 * requests were answered (when the loop was busy, the missed sends are made at once), until `done`
 * holds or `forMs` passed. Resolves with every answer.
 */
async function openLoop(send: () => Promise<Answer>, everyMs: number, forMs: number, done: () => boolean): Promise<Answer[]> {
  const pending: Promise<Answer>[] = [];
  const start = performance.now();
  while (!done() && performance.now() - start < forMs) {
    const due = Math.floor((performance.now() - start) / everyMs) + 1;
    while (pending.length < due) pending.push(send());
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return Promise.all(pending);
}

/** An App serving `GET /work`, `costMs` of CPU each, listening on `port`. */
async function workApp(t: TestContext, config: KConfig, costMs: number): Promise<ReturnType<typeof testApp> & { port: number }> {
  const made = testApp(config);
  made.app.registerController(
    controller({
      method: 'GET',
      path: '/work',
      handler: () => {
        busy(costMs);
        return { ok: true };
      },
    }),
  );
  return { ...made, port: await serve(t, made.app) };
}

const OVERLOAD: KConfig = { overload: { delayTargetMs: 10, delayIntervalMs: 30, retryAfterS: 3 } };
const CLIENTS = 6;
/** A request's cost: CLIENTS of them in one turn of the loop keep the last one waiting well past the target. */
const COST_MS = 15;

describe('admission control', () => {
  test('arrivals beyond capacity on keep-alive connections get 503 OVERLOADED with Retry-After before any hook runs, /health stays 200; then it recovers', async (t: TestContext) => {
    const { app, logs } = testApp(OVERLOAD);
    let hooked = 0;
    app.registerController(
      controller(
        {
          method: 'GET',
          path: '/work',
          onRequest: [
            () => {
              hooked++;
            },
          ],
          handler: () => {
            busy(COST_MS);
            return { ok: true };
          },
        },
        { method: 'GET', path: '/light', handler: () => ({ ok: true }) },
      ),
    );
    const port = await serve(t, app);
    const agent = new Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    t.assert.strictEqual((await get(agent, port, '/work')).status, 200);

    // a request every 5 ms, each 15 ms of work: three times what the App can serve
    let shedSeen = false;
    const answers = await openLoop(
      () =>
        get(agent, port, '/work').then((a) => {
          if (a.status !== 200) shedSeen = true;
          return a;
        }),
      COST_MS / 3,
      10_000,
      () => shedSeen,
    );
    const served = 1 + answers.filter((a) => a.status === 200).length;
    const shed = answers.find((a) => a.status !== 200);
    t.assert.ok(shed !== undefined, 'shed within 10 s of arrivals at three times the capacity');
    t.assert.strictEqual(shed.status, 503);
    t.assert.strictEqual(shed.headers['retry-after'], '3');
    t.assert.strictEqual(shed.headers['content-type'], 'application/problem+json');
    t.assert.strictEqual(JSON.parse(shed.body).code, 'OVERLOADED');
    t.assert.strictEqual(hooked, served, 'a shed request runs no onRequest hook');
    const health = await get(agent, port, '/health');
    t.assert.strictEqual(health.status, 200, 'a shed request is no readiness failure, and /health is never shed');
    const shedding = await logs.waitFor((l) => l['msg'] === 'overloaded: shedding new requests (503 OVERLOADED)');
    t.assert.strictEqual(shedding['level'], 'warn');
    const back = (l: Record<string, unknown>) => l['msg'] === 'load back under target: admitting every request';
    const metrics = await app.registry.metrics();
    // still shedding, unless (on a loaded machine) the backlog drained and it recovered since: then it said so
    if (!logs.lines.some(back)) t.assert.match(metrics, /^flotilla_admission_state 1$/m);
    t.assert.match(metrics, /^flotilla_requests_shed_total\{reason="overload"\} [1-9]\d*$/m);
    t.assert.deepStrictEqual(
      logs.lines.filter((l) => l['level'] === 'error'),
      [],
      'shedding logs no error',
    );

    // the load stops: light requests keep the probe going until the delay stayed under the target for an interval
    while (!logs.lines.some(back)) await get(agent, port, '/light');
    t.assert.strictEqual((await get(agent, port, '/work')).status, 200);
    t.assert.match(await app.registry.metrics(), /^flotilla_admission_state 0$/m);
  });

  test("new connections arriving beyond capacity wait in the listener's accept queue, are seen waiting: the oldest get 503 OVERLOADED", async (t: TestContext) => {
    // each request alone is shorter than the target: only the wait in the accept queue (libuv accepts one
    // connection per turn) can make one late, and the RequestQueue empties that queue before serving
    const { port } = await workApp(t, OVERLOAD, 5);
    const fresh = () => get(new Agent({ keepAlive: false }), port, '/work');
    // a new connection every 2 ms, each 5 ms of work
    let shedSeen = false;
    const answers = await openLoop(
      () =>
        fresh().then((a) => {
          if (a.status !== 200) shedSeen = true;
          return a;
        }),
      2,
      10_000,
      () => shedSeen,
    );
    const shed = answers.find((a) => a.status !== 200);
    t.assert.ok(shed !== undefined, 'shed within 10 s of new connections at 2.5 times the capacity');
    t.assert.strictEqual(shed.status, 503);
    t.assert.strictEqual(JSON.parse(shed.body).code, 'OVERLOADED');
    t.assert.strictEqual(shed.headers['retry-after'], '3');
  });

  test('a closed loop, however saturating, is never shed: keep-alive clients that wait for each answer, requests waiting far past the target', async (t: TestContext) => {
    const { port, logs } = await workApp(t, OVERLOAD, COST_MS);
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    t.after(() => agent.destroy());
    // each round: CLIENTS requests at once, the last waiting (CLIENTS - 1) × 15 ms, past the 10 ms target
    for (let i = 0; i < 30; i++) {
      t.assert.deepStrictEqual(
        (await round(agent, port, '/work')).map((a) => a.status),
        Array(CLIENTS).fill(200),
      );
    }
    t.assert.strictEqual(logs.lines.filter((l) => String(l['msg']).startsWith('overloaded')).length, 0);
  });

  test('a closed loop of new connections is never shed: each client opens the next once answered', async (t: TestContext) => {
    const { port, logs } = await workApp(t, OVERLOAD, 5);
    const client = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) statuses.push((await get(new Agent({ keepAlive: false }), port, '/work')).status);
      return statuses;
    };
    // 30 clients, each waiting for its answer: up to 30 × 5 ms of queue, past the target, bounded
    const statuses = (await Promise.all(Array.from({ length: 30 }, client))).flat();
    t.assert.deepStrictEqual(statuses, Array(30 * 15).fill(200));
    t.assert.strictEqual(logs.lines.filter((l) => String(l['msg']).startsWith('overloaded')).length, 0);
  });

  test('overload.enabled false: requests waiting behind each other are all served', async (t: TestContext) => {
    const { app, port } = await workApp(t, { overload: { ...OVERLOAD.overload, enabled: false } }, COST_MS);
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    t.after(() => agent.destroy());
    for (let i = 0; i < 10; i++) {
      const answers = await round(agent, port, '/work');
      t.assert.deepStrictEqual(
        answers.map((a) => a.status),
        Array(CLIENTS).fill(200),
      );
    }
    t.assert.doesNotMatch(await app.registry.metrics(), /flotilla_admission_state/);
  });

  test('heavy requests one after the other on a keep-alive connection keep the loop busy, but nobody waits: nothing is shed', async (t: TestContext) => {
    const { app, logs } = testApp(OVERLOAD);
    app.registerController(
      controller({
        method: 'GET',
        path: '/heavy',
        handler: () => {
          busy(40);
          return { ok: true };
        },
      }),
    );
    const port = await serve(t, app);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    for (let i = 0; i < 20; i++) t.assert.strictEqual((await get(agent, port, '/heavy')).status, 200);
    t.assert.strictEqual(logs.lines.filter((l) => String(l['msg']).startsWith('overloaded')).length, 0);
  });
});

describe('Admission', () => {
  test('an idle App has no probe timer; a request arms one, which stops an interval after requests stop', async (t: TestContext) => {
    const armed = t.mock.method(globalThis, 'setTimeout');
    const admission = new Admission({ targetMs: 50, intervalMs: 30 });
    t.after(() => admission.stop());
    t.assert.strictEqual(armed.mock.callCount(), 0, 'nothing before the first request');
    t.assert.strictEqual(admission.admit(performance.now(), performance.now()), true);
    t.assert.strictEqual(armed.mock.callCount(), 1);
    for (let i = 0; i < 100; i++) admission.admit(performance.now(), performance.now());
    t.assert.strictEqual(armed.mock.callCount(), 1, 'one probe for many requests, re-armed rather than created');
    armed.mock.restore();
    const probe = armed.mock.calls[0]?.result as NodeJS.Timeout;
    // the first probe saw the requests and re-arms; those of the next interval see none, and the last stops
    await waitUntil(() => !probe.hasRef() && !isPending(probe));
    t.assert.strictEqual(admission.shedding, false);
  });
});

describe('Admission: two thresholds', () => {
  /**
   * Requests that each waited `ms` (read that long ago, starting now), for `forMs` of real time, leaving
   * behind them a backlog that grows by `growth` requests a millisecond from `from` (a closed loop: 0).
   */
  async function waiting(admission: Admission, ms: number, forMs: number, growth = 1, from = 0): Promise<void> {
    const start = performance.now();
    const until = start + forMs;
    while (performance.now() < until) {
      const now = performance.now();
      admission.admit(now - ms, now, Math.round(from + growth * (now - start)));
      // several requests per probe (due every millisecond here), as under load
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // thresholds far above a busy machine's timer lateness, which counts in a request's wait
  const options = { targetMs: 400, intervalMs: 300, shedAfterMs: 100 };

  test('a burst past the target sheds nothing: the queue must have stood above shedAfterMs for an interval', async (t: TestContext) => {
    const admission = new Admission(options);
    t.after(() => admission.stop());
    await waiting(admission, 1, 100);
    await waiting(admission, 600, 100);
    t.assert.strictEqual(admission.shedding, false, '100 ms of waits past the target, after none: a burst');
  });

  test('starts once a queue standing above shedAfterMs for an interval passes the target; sheds past shedAfterMs; stops once it no longer stands', async (t: TestContext) => {
    const admission = new Admission(options);
    t.after(() => admission.stop());
    await waiting(admission, 200, 400);
    t.assert.strictEqual(admission.shedding, false, 'waits of 200 ms: the queue stands, but under the 400 ms target');
    await waiting(admission, 600, 20, 1, 400);
    t.assert.strictEqual(admission.shedding, true, 'past the target after standing for an interval: at once');
    const onset = performance.now();
    t.assert.strictEqual(admission.admit(onset - 150, onset), true, 'queued before shedding started: served, not a slow 503');
    await new Promise((resolve) => setTimeout(resolve, 160));
    const now = performance.now();
    t.assert.strictEqual(admission.admit(now - 150, now), false, 'read after the onset, waited 150 ms, past shedAfterMs: 503');
    t.assert.strictEqual(admission.admit(now - 3, now), true, 'waited 3 ms: served');
    t.assert.strictEqual(admission.admit(now, now, 40, 120), false, 'would wait 120 ms as it arrives: 503 at once');
    t.assert.strictEqual(admission.admit(now, now, 2, 30), true, 'would wait 30 ms: queued');
    await waiting(admission, 200, 400, 0, 420);
    t.assert.strictEqual(admission.shedding, true, 'waits of 200 ms, under the target but past shedAfterMs: still shedding');
    await waiting(admission, 1, 400, 0);
    t.assert.strictEqual(admission.shedding, false, 'waits of 1 ms for an interval: admitting again');
  });

  test('a backlog that stopped growing is a bounded load: waits far past the target for many intervals shed nothing', async (t: TestContext) => {
    const admission = new Admission(options);
    t.after(() => admission.stop());
    // a closed loop's clients come in at once (the backlog jumps to 64), then each answer lets one more in
    await waiting(admission, 1, 20, 3);
    await waiting(admission, 600, 1_000, 0, 64);
    t.assert.strictEqual(admission.shedding, false);
  });

  test('a single request that waited long (the loop held by the one before it) sheds nothing', async (t: TestContext) => {
    const admission = new Admission(options);
    t.after(() => admission.stop());
    await waiting(admission, 600, 1_000, 0, 1);
    t.assert.strictEqual(admission.shedding, false);
  });
});

/** Whether a timer is still to fire (node's Timeout keeps `_destroyed` once it fired for good or was cleared). */
function isPending(timer: NodeJS.Timeout): boolean {
  return !(timer as unknown as { _destroyed: boolean })._destroyed;
}

/** Resolves once `condition` holds, checking once per turn of the event loop. */
async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
