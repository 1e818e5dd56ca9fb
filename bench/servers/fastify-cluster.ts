/**
 * Contender: Fastify 5, full (as `fastify.ts`), in node:cluster with 2 workers: the primary hands each
 * connection to a worker round robin (`SCHED_RR`, Linux's default). What clustering costs elsewhere,
 * beside flotilla's own hand-off. `LOG_REQUESTS=false` turns the request log line off (the cluster
 * comparison, `--cluster-compare`).
 */
import cluster from 'node:cluster';

if (cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_RR;
  for (let i = 0; i < 2; i++) cluster.fork();
} else {
  const { requestLogFromEnv, runFastify } = await import('../services/fastify-items.ts');
  await runFastify(false, requestLogFromEnv());
}
