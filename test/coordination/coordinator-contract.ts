import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { type Coordinator, type CoordinatorOptions, Link } from '../../src/coordination/coordinator.ts';
import { freePort } from '../../tools/throwaway-server.ts';

/** A throwaway server of the backend under test. */
export interface ContractServer {
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ContractBackend {
  readonly name: string;
  readonly skip: string | false;
  server(t: TestContext): Promise<ContractServer>;
  /** The backend's URL for a port nothing listens on. */
  urlFor(port: number): string;
  open(options: CoordinatorOptions): Promise<Coordinator>;
}

/** The fire key of the whole second `offsetMs` from now. */
const keyAt = (job: string, offsetMs = 0) => `${job}:${new Date(Math.floor((Date.now() + offsetMs) / 1000) * 1000).toISOString()}`;

/**
 * What every coordination backend owes the schedulers, on a real server: one winner per fire,
 * clock-skew refusals, an exclusive lease with growing fencing tokens that expires when not
 * renewed, and fast failures while the server is unreachable.
 */
export function coordinatorContract(backend: ContractBackend): void {
  describe(`coordinator contract: ${backend.name}`, { skip: backend.skip }, () => {
    /** A coordinator as a replica opens it; `states` records what its connected gauge was set to. */
    async function replica(t: TestContext, url: string, holder: string, overrides: Partial<CoordinatorOptions> = {}) {
      const states: number[] = [];
      const logger = pino({ enabled: false });
      const coordinator = await backend.open({
        url,
        service: 'contract',
        holder,
        timeoutMs: 500,
        leaseTtlMs: 3_000,
        leaseRenewMs: 1_000,
        logger,
        link: new Link(logger, (v) => states.push(v)),
        ...overrides,
      });
      t.after(() => coordinator.close());
      return { coordinator, states };
    }

    it("broadcasts reach every listening replica, in each sender's order, large ones included", async (t) => {
      const server = await backend.server(t);
      const replicas = await Promise.all(['a', 'b'].map((h) => replica(t, server.url, h)));
      const heard = replicas.map(() => [] as string[]);
      await Promise.all(replicas.map((r, i) => r.coordinator.listen((m) => heard[i]?.push(m))));
      const large = `L${'x'.repeat(20_000)}`; // beyond PostgreSQL's 8000-byte NOTIFY payload
      const sent = ['1', '2', large, '3', '4'];
      for (const message of sent) void replicas[0]?.coordinator.broadcast(message);
      await replicas[0]?.coordinator.broadcast('5');
      const expected = [...sent, '5'];
      for (let i = 0; i < 100 && heard.some((h) => h.length < expected.length); i++) await sleep(50);
      for (const h of heard) assert.deepEqual(h, expected);
    });

    it('gives each fire to exactly one of the replicas claiming it together', async (t) => {
      const server = await backend.server(t);
      const replicas = await Promise.all(['a', 'b', 'c'].map((h) => replica(t, server.url, h)));
      for (let i = 0; i < 20; i++) {
        const key = keyAt(`job${i}`, -i * 1000);
        const wins = await Promise.all(replicas.map((r) => r.coordinator.claim(key, 60_000)));
        assert.equal(wins.filter(Boolean).length, 1, `${key}: ${wins}`);
      }
      // and a claim stays: a replica coming late, still within the window, loses
      const key = keyAt('late');
      assert.equal(await replicas[0]?.coordinator.claim(key, 60_000), true);
      await sleep(100);
      assert.equal(await replicas[1]?.coordinator.claim(key, 60_000), false);
      assert.ok(
        replicas.every((r) => r.states.at(-1) === 1),
        'connected',
      );
    });

    it("refuses a fire further than ttl / 2 from the server's clock, either way, as clock skew", async (t) => {
      const server = await backend.server(t);
      const { coordinator } = await replica(t, server.url, 'a');
      for (const offset of [-40_000, 40_000]) {
        await assert.rejects(coordinator.claim(keyAt('skewed', offset), 60_000), (error: Error & { reason?: string; skewMs?: number }) => {
          assert.equal(error.reason, 'clock-skew');
          assert.ok(Math.abs(error.skewMs ?? 0) > 30_000, `skew ${error.skewMs}`);
          return true;
        });
      }
      assert.equal(await coordinator.claim(keyAt('skewed', -20_000), 60_000), true, 'within the window');
      await assert.rejects(coordinator.claim('not a fire key', 60_000), /not a fire key/);
    });

    it('gives the lease to one replica at a time, with a greater fencing token each time', async (t) => {
      const server = await backend.server(t);
      const [a, b] = [await replica(t, server.url, 'a'), await replica(t, server.url, 'b')];
      const first = await a.coordinator.acquireLease();
      assert.ok(first.held, 'a takes it');
      const refused = await b.coordinator.acquireLease();
      assert.ok(!refused.held && refused.retryInMs > 0 && refused.retryInMs <= 3_000, JSON.stringify(refused));
      assert.equal(await a.coordinator.renewLease(), true);
      assert.equal(await b.coordinator.renewLease(), false, 'b holds nothing to renew');
      await a.coordinator.releaseLease();
      const second = await b.coordinator.acquireLease();
      assert.ok(second.held, 'b takes it once released');
      assert.ok(second.token > first.token, `${second.token} > ${first.token}`);
      assert.equal(await a.coordinator.renewLease(), false, 'a no longer holds it');
      assert.ok(!(await a.coordinator.acquireLease()).held);
    });

    it('lets a lease that is not renewed expire after its ttl', async (t) => {
      const server = await backend.server(t);
      const options = { leaseTtlMs: 1_000, leaseRenewMs: 300 };
      const [a, b] = [await replica(t, server.url, 'a', options), await replica(t, server.url, 'b', options)];
      const first = await a.coordinator.acquireLease();
      assert.ok(first.held);
      assert.ok(!(await b.coordinator.acquireLease()).held);
      await sleep(1_600);
      const second = await b.coordinator.acquireLease();
      assert.ok(second.held, 'taken once expired');
      assert.ok(second.token > first.token);
      assert.equal(await a.coordinator.renewLease().catch(() => false), false, 'the old holder cannot renew');
    });

    it('counts the hits of a rate limit atomically: concurrent hits from three replicas get every count once', async (t) => {
      const server = await backend.server(t);
      const replicas = await Promise.all(['a', 'b', 'c'].map((h) => replica(t, server.url, h)));
      const hits = await Promise.all(
        replicas.flatMap((r) => Array.from({ length: 40 }, () => r.coordinator.hit('GET /x|60000|10.0.0.1', 60_000))),
      );
      assert.deepEqual(
        hits.map((h) => h.count).toSorted((x, y) => x - y),
        Array.from({ length: 120 }, (_, i) => i + 1),
      );
      assert.ok(
        hits.every((h) => h.resetMs > 0 && h.resetMs <= 60_000),
        'the time left is within the window',
      );
      const other = replicas[0];
      assert.ok(other);
      assert.equal((await other.coordinator.hit('GET /x|60000|10.0.0.2', 60_000)).count, 1, 'another key counts apart');
    });

    it("starts a key's window again once it ended, and does not extend it on later hits", async (t) => {
      const server = await backend.server(t);
      const { coordinator } = await replica(t, server.url, 'a');
      const first = await coordinator.hit('w', 600);
      assert.equal(first.count, 1);
      await sleep(300);
      const second = await coordinator.hit('w', 600);
      assert.equal(second.count, 2);
      assert.ok(second.resetMs <= 350, `the window was not extended: ${second.resetMs} ms left`);
      await sleep(400);
      const again = await coordinator.hit('w', 600);
      assert.equal(again.count, 1, 'a new window');
      assert.ok(again.resetMs > 450, `${again.resetMs} ms left`);
    });

    it('takes a request back from a running window, never below zero, and not from an ended one', async (t) => {
      const server = await backend.server(t);
      const [a, b] = await Promise.all(['a', 'b'].map((h) => replica(t, server.url, h)));
      await a?.coordinator.hit('r', 60_000);
      await b?.coordinator.hit('r', 60_000);
      await b?.coordinator.release('r');
      assert.equal((await a?.coordinator.hit('r', 60_000))?.count, 2, 'one of the first two taken back');
      for (let i = 0; i < 4; i++) await a?.coordinator.release('r');
      assert.equal((await b?.coordinator.hit('r', 60_000))?.count, 1, 'never below zero');
      await a?.coordinator.release('nothing'); // no window: nothing to take back
      await a?.coordinator.hit('short', 200);
      await sleep(300);
      await a?.coordinator.release('short');
      assert.equal((await a?.coordinator.hit('short', 200))?.count, 1, 'a new window, untouched');
    });

    it('keeps a session for every replica until its ttl, replaced by a later set, gone once deleted', async (t) => {
      const server = await backend.server(t);
      const [a, b] = await Promise.all(['a', 'b'].map((h) => replica(t, server.url, h)));
      assert.equal(await a?.coordinator.getSession('nobody'), undefined);
      const data = JSON.stringify({ userId: 7, name: 'Zoë', cart: ['x'.repeat(10_000)] });
      await a?.coordinator.setSession('s1', data, 60_000);
      const read = await b?.coordinator.getSession('s1');
      assert.equal(read?.data, data, 'another replica reads it, unicode and size intact');
      assert.ok((read?.ttlLeftMs ?? 0) > 55_000 && (read?.ttlLeftMs ?? 0) <= 60_000, `${read?.ttlLeftMs} ms left`);
      await b?.coordinator.setSession('s1', '{"userId":8}', 60_000);
      assert.equal((await a?.coordinator.getSession('s1'))?.data, '{"userId":8}');
      await a?.coordinator.deleteSession('s1');
      assert.equal(await b?.coordinator.getSession('s1'), undefined);
      await a?.coordinator.deleteSession('s1'); // nothing to delete: no error
      await a?.coordinator.setSession('short', '{}', 300);
      assert.equal((await b?.coordinator.getSession('short'))?.data, '{}');
      await sleep(450);
      assert.equal(await b?.coordinator.getSession('short'), undefined, 'expired');
    });

    it('fails fast while the server is unreachable', async (t) => {
      const port = await freePort();
      const started = performance.now();
      const { coordinator, states } = await replica(t, backend.urlFor(port), 'a');
      assert.ok(performance.now() - started < 2_000, 'opening does not wait for the server');
      const claimed = performance.now();
      await assert.rejects(coordinator.claim(keyAt('down'), 60_000));
      await assert.rejects(coordinator.acquireLease());
      await assert.rejects(coordinator.hit('k', 1_000));
      await assert.rejects(coordinator.getSession('s'));
      await assert.rejects(coordinator.setSession('s', '{}', 1_000));
      assert.ok(performance.now() - claimed < 2_000, `failed in ${Math.round(performance.now() - claimed)} ms`);
      assert.equal(states.at(-1), 0, 'not connected');
    });
  });
}
