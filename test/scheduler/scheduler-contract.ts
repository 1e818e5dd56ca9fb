import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Scheduler } from '../../src/scheduler/scheduler.ts';

/** The work a scheduler under test runs. */
export type ContractJob = (signal: AbortSignal) => Promise<void> | void;

/**
 * The behaviour every {@link Scheduler} owes the App's lifecycle, on real time.
 * `make(job)` must return a scheduler that, once started, calls `job` about
 * once a second (e.g. a cron of `* * * * * *`). The cases run concurrently, so
 * the suite takes about two seconds whatever the number of cases.
 *
 * @example
 * schedulerContract('CronScheduler', (run) => new CronScheduler([{ name: 'contract', cron: '* * * * * *', run }]));
 */
export function schedulerContract(name: string, make: (job: ContractJob) => Scheduler): void {
  describe(`Scheduler contract: ${name}`, { concurrency: true }, () => {
    it('runs the job about once a second once started', async () => {
      const calls = callLog();
      const scheduler = make(calls.job);
      await scheduler.start();
      try {
        const [first, second] = [await calls.nth(1), await calls.nth(2)];
        assert.ok(second - first >= 500 && second - first <= 1_900, `runs ${second - first} ms apart`);
      } finally {
        await scheduler.stop(AbortSignal.timeout(1_000));
      }
    });

    it('starts no run after stop', async () => {
      const calls = callLog();
      const scheduler = make(calls.job);
      await scheduler.start();
      await calls.nth(1);
      await scheduler.stop(AbortSignal.timeout(1_000));
      const after = calls.count;
      await delay(1_200); // the absence of a tick can only be observed over time
      assert.equal(calls.count, after);
    });

    it('stop waits for the running job to finish', async () => {
      const release = Promise.withResolvers<void>();
      const events: string[] = [];
      const calls = callLog(async () => {
        events.push('job started');
        await release.promise;
        events.push('job finished');
      });
      const scheduler = make(calls.job);
      await scheduler.start();
      await calls.nth(1);
      const stopped = Promise.resolve(scheduler.stop(AbortSignal.timeout(5_000))).then(() => events.push('stop resolved'));
      await new Promise((resolve) => setImmediate(resolve));
      events.push('released');
      release.resolve();
      await stopped;
      assert.deepEqual(events, ['job started', 'released', 'job finished', 'stop resolved']);
    });

    it("aborts the running job's signal when stop's signal aborts, and returns", async () => {
      let runSignal: AbortSignal | undefined;
      const calls = callLog((signal) => {
        runSignal = signal;
        return new Promise<void>(() => {}); // ignores its signal: stop must not wait for it
      });
      const scheduler = make(calls.job);
      await scheduler.start();
      await calls.nth(1);
      const deadline = new AbortController();
      const stopped = scheduler.stop(deadline.signal);
      assert.equal(runSignal?.aborted, false);
      deadline.abort(new Error('shutdown deadline'));
      await stopped;
      assert.equal(runSignal?.aborted, true);
    });

    it('survives a job that throws or rejects, and keeps running it', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      const calls = callLog((_signal, n) => {
        if (n === 1) return Promise.reject(new Error('rejected run'));
        throw new Error('thrown run');
      });
      const scheduler = make(calls.job);
      try {
        await scheduler.start();
        await calls.nth(2);
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(unhandled, []);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        await scheduler.stop(AbortSignal.timeout(1_000));
      }
    });

    it('stop is idempotent, and harmless before start', async () => {
      const never = make(() => {});
      await never.stop(AbortSignal.timeout(1_000));
      const scheduler = make(() => {});
      await scheduler.start();
      await scheduler.stop(AbortSignal.timeout(1_000));
      await scheduler.stop(AbortSignal.timeout(1_000));
      await scheduler.stop(AbortSignal.abort());
    });

    it('accepts being bound to an environment twice before start', async (t) => {
      const scheduler = make(() => {});
      if (scheduler.bind === undefined) return t.skip('no bind');
      const env = { logger: pino({ enabled: false }), registry: new Registry(), tracer: trace.getTracer('contract') };
      scheduler.bind(env);
      scheduler.bind(env);
      await scheduler.start();
      await scheduler.stop(AbortSignal.timeout(1_000));
    });
  });
}

/** Counts calls of a job and lets a test await the n-th one (resolving with its time). */
function callLog(body: (signal: AbortSignal, n: number) => Promise<void> | void = () => {}) {
  const times: number[] = [];
  const waiters = new Map<number, PromiseWithResolvers<number>>();
  const waiter = (n: number) => {
    const w = waiters.get(n) ?? Promise.withResolvers<number>();
    waiters.set(n, w);
    return w;
  };
  return {
    get count() {
      return times.length;
    },
    nth: (n: number) => waiter(n).promise,
    job: (signal: AbortSignal) => {
      times.push(performance.now());
      waiter(times.length).resolve(performance.now());
      return body(signal, times.length);
    },
  };
}
