/**
 * What tracking a request in flight and arming its handler timeout cost per request, in-process:
 * flotilla's `InFlight` and `HandlerTimeouts` (a slot in a list, a deadline on the request, one shared
 * timer) against the Set and Map they replaced and a `setTimeout`/`clearTimeout` pair per request,
 * for requests that end long before their limit (the common case). Also what the admission
 * control's `admit()` costs per request while admitting.
 *
 *   node --conditions=source bench/timeout-cost.ts
 */

import type { Ctx } from '../src/app/core/ctx.ts';
import { Admission } from '../src/app/overload/admission.ts';
import { HandlerTimeouts } from '../src/app/overload/handler-timeouts.ts';
import { DEADLINE, InFlight, SLOT } from '../src/app/overload/in-flight.ts';

const N = 2_000_000;
const ROUNDS = 5;
/** As many requests in flight at once: each one ends after this many others started. */
const IN_FLIGHT = 64;

// as the pipeline's Ctx carries them: a route, InFlight's fields, a response (see in-flight.ts)
const requests = Array.from(
  { length: IN_FLIGHT },
  () => ({ route: '', [SLOT]: -1, [DEADLINE]: 0, res: { headersSent: false } }) as unknown as Ctx,
);

function perRequestNs(run: () => void): number {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / N;
}

const contenders: Record<string, () => void> = {
  nothing: () => {
    let sink = 0;
    for (let i = 0; i < N; i++) sink += requests[i % IN_FLIGHT] === undefined ? 1 : 0;
    if (sink < 0) console.log(sink);
  },
  'InFlight enter + leave, HandlerTimeouts watch': () => {
    const inFlight = new InFlight();
    const timeouts = new HandlerTimeouts(inFlight, () => {});
    for (const ctx of requests) inFlight.enter(ctx);
    // the pipeline passes the start time it read for its own needs
    const started = performance.now();
    for (let i = 0; i < N; i++) {
      const ctx = requests[i % IN_FLIGHT] as Ctx;
      inFlight.leave(ctx);
      inFlight.enter(ctx);
      timeouts.watch(ctx, started + 20_000);
    }
    timeouts.stop();
  },
  'a Set of requests and a Map of deadlines (before)': () => {
    const inFlight = new Set<Ctx>();
    const deadlines = new Map<Ctx, number>();
    for (const ctx of requests) inFlight.add(ctx);
    const started = performance.now();
    for (let i = 0; i < N; i++) {
      const ctx = requests[i % IN_FLIGHT] as Ctx;
      inFlight.delete(ctx);
      deadlines.delete(ctx);
      inFlight.add(ctx);
      deadlines.set(ctx, started + 20_000);
    }
  },
  'setTimeout + clearTimeout per request': () => {
    const timers = new Array<NodeJS.Timeout | undefined>(IN_FLIGHT);
    for (let i = 0; i < N; i++) {
      const slot = i % IN_FLIGHT;
      clearTimeout(timers[slot]);
      timers[slot] = setTimeout(() => {}, 20_000);
    }
    for (const timer of timers) clearTimeout(timer);
  },
  'Admission admit()': () => {
    const admission = new Admission({ targetMs: 50, intervalMs: 500 });
    let admitted = 0;
    const now = performance.now();
    for (let i = 0; i < N; i++) if (admission.admit(now, now)) admitted++;
    admission.stop();
    if (admitted !== N) throw new Error('shed while idle');
  },
};

for (const [name, run] of Object.entries(contenders)) {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) samples.push(perRequestNs(run));
  samples.sort((a, b) => a - b);
  console.log(`${name.padEnd(40)} ${(samples[Math.floor(ROUNDS / 2)] as number).toFixed(1)} ns/request (median of ${ROUNDS})`);
}
