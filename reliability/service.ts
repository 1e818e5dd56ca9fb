/**
 * The service every reliability scenario runs (`service:` of the generated YAML).
 *
 * - `GET /who` → `{ pid }`: which worker answered (the replacement probe, the load).
 * - `GET /work` → `{ pid, sum }`, a little CPU; `?fail=1` throws a plain Error (a planned 500).
 * - `GET /slow?ms=N` → `{ pid, waited }` after N ms (in-flight requests at a shutdown).
 * - `POST /upload` → `{ pid, bytes }`: reads a JSON body (slow-body attacks need a route that reads one).
 * - `GET /big?kb=N` → N KiB of bytes (slow-read attacks need a response larger than the socket buffers).
 * - `GET /hang` → never answers: `while (true) {}` (a stuck worker, alive but deaf to heartbeats).
 * - `GET /busy?ms=N` → `{ pid, busyMs }` after blocking the event loop synchronously for N ms.
 * - `GET /cpu?ms=N` → `{ pid }` after computing for N ms (default 10) of the worker's CPU time (`lib/cpu-burn.ts`):
 *   a CPU-bound route whose cost does not shrink when the worker is descheduled (the overload scenario).
 * - `GET /leak?mb=N` → `{ pid, retainedMB }`: retains N MB more (filled, so resident), never released.
 * - `RELIABILITY_HANG_HOOK=1`: a worker shutdown hook that never resolves (the budget case).
 * - `RELIABILITY_BUSY_JOB=1`: a cron job in the primary's service thread that computes for 2 s every 3 s.
 * - `RELIABILITY_TICK=1`: a one-second cron job logging `reliability tick` with its fire key and how late it started (`lateMs`).
 */
import { writeSync } from 'node:fs';
import { CronScheduler, defineService } from 'flotilla';
import { burnCpu } from './lib/cpu-burn.ts';

const BIG = Buffer.alloc(4096 * 1024, 'flotilla ');
const MB = 1024 * 1024;
/** What `GET /leak` retains, for as long as the worker lives. */
const leaked: Buffer[] = [];

export default defineService((app) => {
  app.registerController({
    routes: () => [
      { method: 'GET', path: '/who', handler: () => ({ pid: process.pid }) },
      {
        method: 'GET',
        path: '/work',
        handler: (ctx) => {
          if (ctx.query['fail'] === '1') throw new Error('planned failure');
          let sum = 0;
          for (let i = 0; i < 200; i++) sum += i * i;
          return { pid: process.pid, sum };
        },
      },
      {
        method: 'GET',
        path: '/slow',
        handler: async (ctx) => {
          const ms = Math.min(Number(ctx.query['ms'] ?? 1000), 60_000);
          await new Promise((resolve) => setTimeout(resolve, ms));
          return { pid: process.pid, waited: ms };
        },
      },
      {
        method: 'POST',
        path: '/upload',
        handler: (ctx) => ({ pid: process.pid, bytes: JSON.stringify(ctx.body ?? null).length }),
      },
      {
        method: 'GET',
        path: '/big',
        handler: (ctx) => {
          const kb = Math.min(Number(ctx.query['kb'] ?? 1024), 4096);
          ctx.send(BIG.subarray(0, kb * 1024), 'application/octet-stream');
        },
      },
      {
        method: 'GET',
        path: '/hang',
        handler: () => {
          for (;;) {
            // stuck on purpose, forever: `while (true) {}`
          }
        },
      },
      {
        method: 'GET',
        path: '/busy',
        handler: (ctx) => {
          const ms = Math.min(Number(ctx.query['ms'] ?? 1000), 60_000);
          const until = Date.now() + ms;
          while (Date.now() < until) {
            // blocking on purpose: no timer, no I/O, no IPC meanwhile
          }
          return { pid: process.pid, busyMs: ms };
        },
      },
      {
        method: 'GET',
        path: '/cpu',
        handler: (ctx) => {
          const ms = Math.min(Math.max(Number(ctx.query['ms'] ?? 10) || 0, 0), 1_000);
          return { pid: process.pid, x: burnCpu(ms) };
        },
      },
      {
        method: 'GET',
        path: '/leak',
        handler: (ctx) => {
          const mb = Math.min(Math.max(Math.trunc(Number(ctx.query['mb'] ?? 1)) || 0, 0), 512);
          if (mb > 0) leaked.push(Buffer.alloc(mb * MB, 0xa5));
          return { pid: process.pid, retainedMB: leaked.reduce((sum, b) => sum + b.length, 0) / MB };
        },
      },
    ],
  });
  if (app.role === 'primary' && process.env['RELIABILITY_BUSY_JOB'] === '1') {
    app.registerScheduler(
      new CronScheduler([
        {
          name: 'busy',
          cron: '*/3 * * * * *',
          run: () => {
            // written at once, with its own clock: the logger's batch is only flushed once the job lets the thread breathe
            writeSync(1, `${JSON.stringify({ msg: 'busy job started', time: new Date().toISOString(), pid: process.pid })}\n`);
            const until = Date.now() + 2_000;
            while (Date.now() < until) {
              // computing on purpose, 2 s
            }
          },
        },
      ]),
    );
  }
  if (app.role === 'primary' && process.env['RELIABILITY_TICK'] === '1') {
    app.registerScheduler(
      new CronScheduler([
        {
          name: 'tick',
          cron: '* * * * * *',
          run: (_signal, fire) =>
            app.logger.info(
              { fire: fire.key, lateMs: performance.timeOrigin + performance.now() - fire.date.getTime() },
              'reliability tick',
            ),
        },
      ]),
    );
  }
  if (app.role === 'worker' && process.env['RELIABILITY_HANG_HOOK'] === '1') {
    app.onShutdown(() => new Promise<void>(() => {}));
  }
});
