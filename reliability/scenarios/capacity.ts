import { Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { measureCapacity } from '../lib/load.ts';
import { info } from '../lib/report.ts';
import { fmt } from '../lib/stats.ts';
import { runWrk, type WrkResult } from '../lib/wrk.ts';

const NAME = 'capacity';
const CONNECTIONS = 32;
const RUNS = 3;

/**
 * The service's capacity on this machine: a 2-worker cluster on `GET /work`
 * driven closed-loop by wrk (the soak runs at 70 % of it), and what the
 * recording undici client reaches on the same cluster (the kill and SIGTERM
 * scenarios run at half of that). Each is the median of 3 runs of 3 s: one
 * run on a shared machine can be far off either way.
 */
export async function capacity(ctx: Context): Promise<ScenarioOutcome> {
  const cluster = new Cluster({ runtime: ctx.runtime });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    await runWrk({ port, path: '/work', connections: CONNECTIONS, durationS: 2 }); // warm-up
    const wrkRuns: WrkResult[] = [];
    for (let i = 0; i < RUNS; i++) wrkRuns.push(await runWrk({ port, path: '/work', connections: CONNECTIONS, durationS: 3 }));
    wrkRuns.sort((a, b) => a.rps - b.rps);
    const wrk = wrkRuns[1] as WrkResult;
    ctx.capacityRps = wrk.rps;
    ctx.log(
      `capacity: ${fmt(wrk.rps)} req/s (wrk, ${CONNECTIONS} connections, closed loop; runs ${wrkRuns.map((r) => fmt(r.rps)).join(', ')})`,
    );

    const clientRuns: number[] = [];
    for (let i = 0; i < RUNS; i++) clientRuns.push(await measureCapacity(port, '/work', CONNECTIONS, 3_000, i === 0 ? 1_000 : 0));
    clientRuns.sort((a, b) => a - b);
    const client = clientRuns[1] as number;
    ctx.clientRps = client;
    ctx.log(`recording client: ${fmt(client)} req/s closed loop (runs ${clientRuns.map((r) => fmt(r)).join(', ')})`);
    await cluster.stop();
    return {
      rows: [
        info(
          NAME,
          `GET /work, wrk closed loop, ${CONNECTIONS} connections, median of ${RUNS} × 3 s`,
          `${fmt(wrk.rps)} req/s (p99 ${fmt(wrk.latencyMs.p99, 1)} ms; runs ${wrkRuns.map((r) => fmt(r.rps)).join(', ')})`,
        ),
        info(NAME, 'the same with the recording undici client', `${fmt(client)} req/s (runs ${clientRuns.map((r) => fmt(r)).join(', ')})`),
      ],
      notes: [],
    };
  } finally {
    cluster.dispose();
  }
}
