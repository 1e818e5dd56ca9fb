import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staleAfterMs } from '../../src/primary/cluster-exposition.ts';
import { Heartbeat, idleIntervalMs } from '../../src/primary/heartbeat.ts';
import { isIdle } from '../../src/process/vitals.ts';

const policy = { intervalMs: 1_000, timeoutMs: 10_000 };

function watched() {
  const pings: string[] = [];
  const stuck: string[] = [];
  const hb = new Heartbeat<string>(policy, {
    ping: (worker) => pings.push(worker),
    stuck: (worker) => stuck.push(worker),
    age: () => {},
  });
  return { hb, pings, stuck };
}

test('idle rounds are four intervals apart, at most a quarter of the timeout, never under one interval', () => {
  assert.equal(idleIntervalMs(policy), 2_500);
  assert.equal(idleIntervalMs({ intervalMs: 200, timeoutMs: 10_000 }), 800);
  assert.equal(idleIntervalMs({ intervalMs: 3_000, timeoutMs: 4_000 }), 3_000);
  assert.equal(idleIntervalMs({ intervalMs: 1_000, timeoutMs: 0 }), 4_000);
});

test('the rounds stretch only while every watched worker said it was idle', () => {
  const { hb } = watched();
  hb.watch('a', 0);
  hb.watch('b', 0);
  assert.equal(hb.nextRoundMs, 1_000);
  hb.answered('a', 100, true);
  assert.equal(hb.nextRoundMs, 1_000, 'b has not said it is idle');
  hb.answered('b', 100, true);
  assert.equal(hb.nextRoundMs, 2_500);
  hb.answered('b', 1_200, false);
  assert.equal(hb.nextRoundMs, 1_000, 'a request on b brings the pace back at once');
  hb.unwatch('b');
  assert.equal(hb.nextRoundMs, 2_500);
  hb.watch('c', 1_300);
  assert.equal(hb.nextRoundMs, 1_000, 'a new worker is watched at the full pace');
});

test('an idle worker that stops answering is still declared stuck once the timeout passed', () => {
  const { hb, pings, stuck } = watched();
  hb.watch('a', 0);
  hb.answered('a', 0, true);
  hb.tick(2_500);
  hb.tick(9_999);
  assert.deepEqual(stuck, []);
  assert.deepEqual(pings, ['a', 'a']);
  hb.tick(10_000);
  assert.deepEqual(stuck, ['a']);
  hb.tick(12_500);
  assert.deepEqual(stuck, ['a'], 'declared once, then unwatched');
  assert.equal(pings.length, 2);
});

test('an answer that follows no request and a quiet event loop is idle', () => {
  const pong = { requests: 7, elu: 0.001 };
  assert.equal(isIdle(undefined, pong), false, 'the first answer has nothing to compare with');
  assert.equal(isIdle({ requests: 7 }, pong), true);
  assert.equal(isIdle({ requests: 6 }, pong), false);
  assert.equal(isIdle({ requests: 7 }, { requests: 7, elu: 0.5 }), false, 'busy without requests: a timer, a WebSocket');
});

test('a quiet worker is not stale between two idle heartbeat answers', () => {
  assert.equal(staleAfterMs(1_000, policy), 3_500, 'the defaults: an idle round (2.5 s) plus one interval');
  assert.equal(staleAfterMs(5_000, policy), 15_000, 'three push intervals when that is longer');
  assert.equal(staleAfterMs(200, { intervalMs: 1_000, timeoutMs: 20_000 }), 5_000);
});
