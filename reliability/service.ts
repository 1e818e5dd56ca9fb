/**
 * The service every reliability scenario runs (`service:` of the generated YAML).
 *
 * - `GET /who` → `{ pid }`: which worker answered (the replacement probe, the load).
 * - `GET /work` → `{ pid, sum }`, a little CPU; `?fail=1` throws a plain Error (a planned 500).
 * - `GET /slow?ms=N` → `{ pid, waited }` after N ms (in-flight requests at a shutdown).
 * - `POST /upload` → `{ pid, bytes }`: reads a JSON body (slow-body attacks need a route that reads one).
 * - `GET /big?kb=N` → N KiB of bytes (slow-read attacks need a response larger than the socket buffers).
 * - `RELIABILITY_HANG_HOOK=1`: a worker shutdown hook that never resolves (the budget case).
 */
import { defineService } from 'flotilla';

const BIG = Buffer.alloc(4096 * 1024, 'flotilla ');

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
    ],
  });
  if (app.role === 'worker' && process.env['RELIABILITY_HANG_HOOK'] === '1') {
    app.onShutdown(() => new Promise<void>(() => {}));
  }
});
