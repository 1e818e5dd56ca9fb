import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Coordinator, LeaseAttempt } from '../../src/coordination/coordinator.ts';
import { LeaseRunner } from '../../src/coordination/lease-runner.ts';
import type { Scheduler, SchedulerEnv } from '../../src/scheduler/scheduler.ts';

/** A coordinator whose lease answers are scripted: `free` says whether the lease can be taken, `renewals` whether it can be kept. */
function fakeCoordinator() {
  const calls: string[] = [];
  let token = 0;
  const state = { free: true, renewals: true as boolean | 'throw' };
  const coordinator: Coordinator = {
    backend: 'fake',
    claim: async () => true,
    acquireLease: async (): Promise<LeaseAttempt> => {
      calls.push('acquire');
      if (!state.free) return { held: false, retryInMs: 20 };
      state.free = false;
      return { held: true, token: ++token };
    },
    renewLease: async () => {
      calls.push('renew');
      if (state.renewals === 'throw') throw new Error('connection lost');
      return state.renewals;
    },
    releaseLease: async () => {
      calls.push('release');
    },
    hit: async () => ({ count: 1, resetMs: 1_000 }),
    release: async () => {},
    getSession: async () => undefined,
    setSession: async () => {},
    deleteSession: async () => {},
    ping: async () => {},
    broadcast: async () => {},
    listen: async () => {},
    close: async () => {},
  };
  return { coordinator, calls, state };
}

/** A scheduler recording its lifecycle, with the fencing token it was bound with. */
function recorder() {
  const events: string[] = [];
  let token: number | undefined;
  const signals: AbortSignal[] = [];
  const scheduler: Scheduler = {
    bind: (env: SchedulerEnv) => {
      token = env.fencingToken;
    },
    start: () => void events.push(`start ${token}`),
    stop: (signal) => {
      signals.push(signal);
      events.push(`stop ${token}`);
    },
  };
  return { scheduler, events, signals };
}

/** Resolves once `check()` holds (polled), rejects after 5 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const env: SchedulerEnv = { logger: pino({ enabled: false }), registry: new Registry(), tracer: trace.getTracer('test') };

test('starts the schedulers on taking the lease, stops them on losing it before it expires, and starts them again with a new token', async () => {
  const { coordinator, calls, state } = fakeCoordinator();
  const { scheduler, events, signals } = recorder();
  const held: boolean[] = [];
  const runner = new LeaseRunner({
    coordinator,
    schedulers: [scheduler],
    env,
    ttlMs: 600,
    renewMs: 100,
    logger: env.logger,
    held: (h) => held.push(h),
  });
  assert.ok(runner.has(scheduler));
  runner.start();
  await until(() => calls.filter((c) => c === 'renew').length >= 2, 'renewals');
  assert.deepEqual(events, ['start 1']);

  state.renewals = 'throw'; // the coordinator stops answering
  await until(() => events.length === 2, 'the stop');
  assert.deepEqual(events, ['start 1', 'stop 1']);
  const signal = signals[0];
  assert.ok(signal !== undefined && !signal.aborted, 'the stop signal aborts only when the lease expires');
  await until(() => signal.aborted, 'the expiry of the last renewal');
  assert.ok(calls.includes('release'), 'released after stopping');

  state.renewals = true;
  state.free = true; // another replica's lease expired, or the coordinator is back
  await until(() => events.length === 3, 'the start again');
  assert.deepEqual(events, ['start 1', 'stop 1', 'start 2'], 'bound again with the new token before the start');
  assert.deepEqual(held.slice(0, 3), [true, false, true]);

  await runner.stop(scheduler, AbortSignal.timeout(1_000));
  assert.deepEqual(events, ['start 1', 'stop 1', 'start 2', 'stop 2']);
  assert.equal(calls.at(-1), 'release', 'the last stop releases the lease');
  await sleep(200);
  assert.deepEqual(events.length, 4, 'never started again once stopped by the shutdown');
});

test('a standby replica starts nothing, and a renewal that finds the lease gone stops the schedulers', async () => {
  const { coordinator, state } = fakeCoordinator();
  state.free = false;
  const { scheduler, events } = recorder();
  const runner = new LeaseRunner({
    coordinator,
    schedulers: [scheduler],
    env,
    ttlMs: 600,
    renewMs: 100,
    logger: env.logger,
    held: () => {},
  });
  runner.start();
  await sleep(200);
  assert.deepEqual(events, [], 'standby');
  state.free = true;
  await until(() => events.length === 1, 'the start');
  assert.deepEqual(events, ['start 1']);
  state.renewals = false;
  await until(() => events.length === 2, 'the stop');
  assert.deepEqual(events, ['start 1', 'stop 1']);
  await runner.stop(scheduler, AbortSignal.timeout(1_000));
  assert.deepEqual(events, ['start 1', 'stop 1'], 'a scheduler that does not run is not stopped again');
});
