/**
 * `npm run reliability`: runs the reliability scenarios against real clusters
 * started by the `flotilla` CLI (compiled, or from the sources with
 * `--source`), prints a table of the figures against their targets, and
 * writes it to reliability/results/latest.md.
 * See reliability/README.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { formatDuration, now } from './lib/clock.ts';
import { killAllClusters } from './lib/cluster.ts';
import type { Context, Scenario } from './lib/context.ts';
import { parseOptions, type ScenarioName, USAGE } from './lib/options.ts';
import { cpuSnapshot, machineLoad, otherCpuPercent } from './lib/proc.ts';
import { info, markdownTable, type Row, type ScenarioReport, textTable } from './lib/report.ts';
import { compiledRuntime, ROOT, sourceRuntime } from './lib/runtime.ts';
import { fmt } from './lib/stats.ts';
import { ensureCommand } from './lib/tools.ts';
import { balancing } from './scenarios/balancing.ts';
import { busyJob } from './scenarios/busy-job.ts';
import { capacity } from './scenarios/capacity.ts';
import { coordination } from './scenarios/coordination.ts';
import { killWorker } from './scenarios/kill-worker.ts';
import { memoryRecycling } from './scenarios/memory-recycling.ts';
import { overload } from './scenarios/overload.ts';
import { prometheusTruth } from './scenarios/prometheus-truth.ts';
import { sigterm } from './scenarios/sigterm.ts';
import { slowClients } from './scenarios/slow-clients.ts';
import { soak } from './scenarios/soak.ts';
import { stuckWorker } from './scenarios/stuck-worker.ts';

const SCENARIOS: Record<ScenarioName, { title: string; run: Scenario }> = {
  capacity: { title: 'capacity', run: capacity },
  kill: { title: 'kill -9 a worker under steady load', run: killWorker },
  sigterm: { title: 'SIGTERM under load with keep-alive clients', run: sigterm },
  slow: { title: 'slowloris, slow body, slow read', run: slowClients },
  stuck: { title: 'a worker stuck in while (true) {} under load', run: stuckWorker },
  'busy-job': { title: "a cron job computing 2 s every 3 s in the primary's service thread", run: busyJob },
  memory: { title: 'graceful recycling on cluster.maxMemoryMB', run: memoryRecycling },
  prometheus: { title: 'what a real Prometheus sees: kill -9, SIGHUP, a worker busy 15 s', run: prometheusTruth },
  coordination: { title: 'schedulers across three replicas on Redis and PostgreSQL: the cost of a fire', run: coordination },
  balancing: {
    title: 'cluster.balancing primary vs kernel under new connections: kill -9, rolling restart, SIGTERM, spread',
    run: balancing,
  },
  overload: {
    title: 'overload: 2× and 3× capacity on a CPU-bound route, new connections and keep-alive, flotilla vs Fastify',
    run: overload,
  },
  soak: { title: 'soak', run: soak },
};

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`reliability: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (process.platform !== 'linux') {
    process.stderr.write('reliability: needs Linux (/proc, process groups, slowhttptest)\n');
    return 2;
  }
  const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  if (options.only.includes('capacity') || options.only.includes('soak')) ensureCommand('wrk', 'wrk', log);
  if (options.only.includes('slow')) ensureCommand('slowhttptest', 'slowhttptest', log);
  if (options.only.includes('prometheus')) ensureCommand('prometheus', 'prometheus', log);
  if (options.only.includes('coordination')) {
    ensureCommand('redis-server', 'redis-server', log);
    ensureCommand('pg_ctlcluster', 'postgresql', log);
  }

  if (!options.source) log('compiling src/ and the fixture service to JavaScript');
  const runtime = options.source ? sourceRuntime() : compiledRuntime();
  const ctx: Context = { options, log, runtime, capacityRps: undefined, clientRps: undefined };
  const before = machineLoad();
  const started = now();
  const reports: ScenarioReport[] = [];
  for (const name of options.only) {
    const scenario = SCENARIOS[name];
    log(`— ${scenario.title}`);
    const t0 = now();
    const cpu0 = cpuSnapshot();
    const noise = (label: string) =>
      info(
        label,
        'CPU used by other processes meanwhile (noise)',
        `${fmt(otherCpuPercent(cpu0, cpuSnapshot(), before.cpus))} % of ${before.cpus} CPUs`,
      );
    try {
      const outcome = await scenario.run(ctx);
      outcome.rows.push(noise(outcome.rows[0]?.scenario ?? name));
      reports.push({ name, ...outcome, seconds: (now() - t0) / 1000 });
    } catch (error) {
      const message = (error as Error).stack ?? String(error);
      log(`${name} could not run: ${message}`);
      reports.push({
        name,
        rows: [
          { scenario: name, figure: 'scenario', value: (error as Error).message.split('\n')[0] ?? '', target: 'runs', status: 'error' },
        ],
        notes: [`${name} could not run:\n\n\`\`\`\n${message.slice(0, 3000)}\n\`\`\``],
        seconds: (now() - t0) / 1000,
      });
    }
  }
  const after = machineLoad();
  const rows = reports.flatMap((r) => r.rows);
  process.stdout.write(`\n${textTable(rows)}\n\n`);
  const missed = rows.filter((r) => r.status === 'MISSED' || r.status === 'error');
  const markdown = renderMarkdown(reports, rows, {
    soak: formatDuration(options.soakMs),
    runtime: runtime.kind,
    only: options.only,
    minutes: (now() - started) / 60_000,
    loadBefore: before.load1,
    loadAfter: after.load1,
    cpus: before.cpus,
    revision: revision(),
  });
  mkdirSync(dirname(options.out), { recursive: true });
  // no machine paths in the results file (error stacks, tails of cluster logs)
  writeFileSync(options.out, markdown.replaceAll(ROOT, '<repo>/').replaceAll(tmpdir(), '<tmp>'));
  log(`${rows.filter((r) => r.status === 'met').length} targets met, ${missed.length} missed; written to ${options.out}`);
  return missed.length === 0 ? 0 : 1;
}

interface RunInfo {
  soak: string;
  runtime: string;
  only: readonly string[];
  minutes: number;
  loadBefore: number;
  loadAfter: number;
  cpus: number;
  revision: string;
}

/** The commit the clusters ran, and whether src/ had uncommitted changes. */
function revision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty === '' ? head : `${head} + uncommitted changes in src/`;
  } catch {
    return 'unknown revision';
  }
}

function renderMarkdown(reports: readonly ScenarioReport[], rows: readonly Row[], run: RunInfo): string {
  const out = [
    '# flotilla reliability results',
    '',
    `Written by \`npm run reliability\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (flotilla ${run.revision}) — ` +
      `Node ${process.version}, Linux, ${run.cpus} CPUs, load average ${run.loadBefore.toFixed(2)} before and ${run.loadAfter.toFixed(2)} after; ` +
      `clusters run ${run.runtime === 'compiled' ? 'as compiled JavaScript (as the published package and the Docker image do)' : 'from the .ts sources'}; ` +
      `scenarios: ${run.only.join(', ')}; soak ${run.soak}; ${run.minutes.toFixed(1)} minutes in all.`,
    '',
    'Timings come from one machine that also runs the load generators (and, for this run, whatever else was busy on it):',
    'read them as orders of magnitude with their targets, not as benchmarks. How each figure is measured: reliability/README.md.',
    '',
    markdownTable(rows),
    '',
  ];
  const withNotes = reports.filter((r) => r.notes.length > 0);
  if (withNotes.length > 0) {
    out.push('## Notes', '');
    for (const report of withNotes) {
      out.push(`### ${report.name}`, '');
      for (const note of report.notes) out.push(note.includes('\n') ? note : `- ${note}`, '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

// the clusters run in their own process groups: a Ctrl-C here must not leave them behind
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`reliability: ${signal}, killing the clusters\n`);
    killAllClusters();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`reliability: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
