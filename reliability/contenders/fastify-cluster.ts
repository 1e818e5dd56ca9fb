/**
 * The Fastify contender of the overload scenario: Fastify 5 in `node:cluster`
 * (round robin: the primary accepts every connection and hands it to a worker,
 * as flotilla's `balancing: primary`), `RELIABILITY_WORKERS` workers (default
 * 2) on 127.0.0.1 and an OS-chosen port shared by all of them, a replacement
 * forked for a worker that dies, SIGTERM closing the workers' servers.
 * `RELIABILITY_UNDER_PRESSURE=1` registers `@fastify/under-pressure` with
 * `maxEventLoopDelay: 100` (its other settings at their defaults: sampled
 * every second, `Retry-After: 10`).
 *
 * Routes as the fixture service's: `GET /cpu?ms=N` (N ms of the worker's CPU,
 * default 10), `GET /health`, `GET /who`. Every response ends in one JSON line
 * on stdout (`request completed` when it was written, `request aborted` when
 * the connection closed first) with the client's `X-Request-Id` and the
 * status, as flotilla's request lines: what the scenario matches with its
 * clients' outcomes to count the requests computed for clients already gone.
 * The primary writes `worker listening` lines (`slot`, `workerPid`,
 * `address.port`) as flotilla's primary does.
 */
import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import Fastify, { type FastifyPluginCallback, LogController } from 'fastify';
import { benchLogger } from '../../bench/services/logger.ts';
import { burnCpu } from '../lib/cpu-burn.ts';

const WORKERS = Number(process.env['RELIABILITY_WORKERS'] ?? 2);
const line = (fields: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);

if (cluster.isPrimary) {
  const slots = new Map<number, number>();
  let stopping = false;
  const fork = (slot: number) => slots.set(cluster.fork({ RELIABILITY_SLOT: String(slot) }).id, slot);
  for (let slot = 0; slot < WORKERS; slot++) fork(slot);
  cluster.on('listening', (worker, address) =>
    line({ msg: 'worker listening', slot: slots.get(worker.id), workerPid: worker.process.pid, address: { port: address.port } }),
  );
  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.get(worker.id) ?? 0;
    slots.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    line({ msg: 'worker exited unexpectedly', slot, workerPid: worker.process.pid, code, signal });
    fork(slot);
  });
  process.on('SIGTERM', () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), 10_000).unref();
  });
} else {
  const logger = benchLogger('reliability');
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    keepAliveTimeout: 72_000,
  });
  // every response, whoever answered it (a route, a 404, under-pressure's 503), in one line as flotilla's
  app.server.prependListener('request', (req, res) => {
    const header = req.headers['x-request-id'];
    const requestId = typeof header === 'string' ? header : undefined;
    res.once('close', () => {
      const finished = res.writableFinished;
      const fields = { requestId, method: req.method, path: req.url, status: res.headersSent ? res.statusCode : 499 };
      if (finished) logger.info(fields, 'request completed');
      else logger.warn({ ...fields, aborted: true }, 'request aborted');
    });
  });
  if (process.env['RELIABILITY_UNDER_PRESSURE'] === '1') {
    // loaded by require so that NODE_PATH can point at a copy installed elsewhere
    const underPressure = createRequire(import.meta.url)('@fastify/under-pressure') as FastifyPluginCallback<{ maxEventLoopDelay: number }>;
    await app.register(underPressure, { maxEventLoopDelay: 100 });
  }
  app.get('/cpu', (request) => {
    const ms = Math.min(Math.max(Number((request.query as Record<string, string>)['ms'] ?? 10) || 0, 0), 1_000);
    return { pid: process.pid, x: burnCpu(ms) };
  });
  app.get('/health', () => ({ status: 'pass', checks: {} }));
  app.get('/who', () => ({ pid: process.pid }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
    setTimeout(() => process.exit(1), 5_000).unref();
  });
}
