/**
 * What a route's schemas cost per request, each way flotilla takes them: `POST /books` (a book of five
 * fields, one optional, with a nested array of 3; a 201 of the book plus an id, and one key no schema
 * declares, which the response schema drops) with its body and 201 schemas written in JSON Schema
 * (ajv), Zod 4, Valibot 1, ArkType 2 and TypeBox 1 (services/book-schemas.ts), beside the same route
 * with no schema (the reference), and Fastify 5 with fastify-type-provider-zod and the same Zod schemas
 * beside Fastify with no schema. Each is a standalone server (servers/flotilla-schema.ts, `env:
 * production`, no request log line; servers/fastify-zod.ts, no logger), compiled, pinned to core 0, wrk
 * (1 thread, keep-alive) on core 1, every request the same valid book. Before measuring, each must answer 201 with the undeclared key
 * dropped and 400 for each of five invalid books. Then a warm-up run each, alternating rounds (the
 * order turns by one each round), medians; a noisy run is measured again, as in the main run.
 *
 *   node --conditions=source bench/schema-cost.ts [--rounds 9] [--duration 2] [--warmup 5] [--connections 50] [--rev HEAD] [--source]
 *
 * `--rev`: flotilla's src/ as of that commit (git archive: a working tree in the middle of a change is
 * not read), with the current bench/servers and bench/services; `--source` runs the working tree's
 * .ts files instead. Writes bench/results/schema-cost.md and schema-cost.json.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { buildBaseline, resolveRevision } from './lib/build.ts';
import type { Contender, Scenario } from './lib/contenders.ts';
import { postJson } from './lib/http.ts';
import { loadRun, type Run } from './lib/load.ts';
import { machineMeta, packageVersion } from './lib/meta.ts';
import { waitQuiet } from './lib/proc.ts';
import { freePort, ROOT, type Runtime, ServerProcess } from './lib/server-process.ts';
import { median, sig } from './lib/stats.ts';
import { NOISY_PCT, pairedRatio, summarize } from './lib/summary.ts';
import { ensureWrk } from './lib/wrk.ts';
import { BOOK, bookReply, INVALID } from './services/book-schemas.ts';

const { values } = parseArgs({
  options: {
    // many short rounds: on a shared machine a slow spell then spoils a few runs of each, which the medians leave out
    rounds: { type: 'string', default: '9' },
    duration: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rev: { type: 'string', default: 'HEAD' },
    source: { type: 'boolean', default: false },
  },
});
const ROUNDS = Math.max(3, Number(values.rounds));
const DURATION_S = Number(values.duration);
const WARMUP_S = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
const pin = availableParallelism() >= 2;
const [serverCore, wrkCore] = pin ? [0, 1] : [undefined, undefined];
const t0 = performance.now();
const log = (line: string) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

const contender = (name: string, title: string, way: string): Contender => ({
  name,
  title,
  entry: name.startsWith('fastify') ? 'servers/fastify-zod.ts' : 'servers/flotilla-schema.ts',
  readyLines: 1,
  pinned: true,
  env: { BENCH_SCHEMA: way, NODE_ENV: 'production' },
});
/** In this order in round 1, then turned by one each round: each Zod case beside the other and beside its reference. */
const CONTENDERS: Contender[] = [
  contender('none', 'flotilla, no schema (reference)', 'none'),
  contender('json', 'flotilla, JSON Schema (ajv)', 'json'),
  contender('typebox', 'flotilla, TypeBox 1 (JSON Schema, ajv)', 'typebox'),
  contender('valibot', 'flotilla, Valibot 1', 'valibot'),
  contender('arktype', 'flotilla, ArkType 2', 'arktype'),
  contender('zod', 'flotilla, Zod 4', 'zod'),
  contender('fastify-zod', 'Fastify 5, Zod 4 (fastify-type-provider-zod)', 'zod'),
  contender('fastify-none', 'Fastify 5, no schema (reference)', 'none'),
];
/** The same framework with no schema, which `added` subtracts. */
const referenceOf = (name: string) => (name.startsWith('fastify') ? 'fastify-none' : 'none');
const SCENARIO: Scenario = {
  name: 'post',
  title: 'POST /books, a valid book, 201',
  path: '/books',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(BOOK),
  keepAlive: true,
};

/** What each must answer before it is measured: 201 with the declared keys only, with and without the optional field; 400 for each invalid book. */
async function check(port: number, validates: boolean): Promise<string[]> {
  const issues: string[] = [];
  const { subtitle: _, ...withoutSubtitle } = BOOK;
  for (const body of [BOOK, withoutSubtitle]) {
    const r = await postJson(port, '/books', body);
    const { internal: __, ...expected } = bookReply(body);
    let got: unknown;
    try {
      got = JSON.parse(r.body);
    } catch {}
    if (r.status !== 201) issues.push(`valid book${body === BOOK ? '' : ' without subtitle'}: ${r.status}, not 201`);
    else if ((got as { internal?: unknown })?.internal !== undefined) issues.push('the undeclared key was sent');
    else if (!isDeepStrictEqual(got, expected)) issues.push(`201 body differs: ${r.body.slice(0, 200)}`);
  }
  if (!validates) return issues;
  for (const [what, body] of Object.entries(INVALID)) {
    const r = await postJson(port, '/books', body);
    if (r.status !== 400) issues.push(`${what}: ${r.status}, not 400`);
  }
  return issues;
}

const wrk = ensureWrk();
const { commit, short, subject } = resolveRevision(values.rev);
const runtime: Runtime = values.source ? { root: ROOT, source: true } : { root: buildBaseline(commit), source: false };
const busy = await waitQuiet(60, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
log(
  `schema cost: ${CONTENDERS.length} contenders, ${ROUNDS} rounds of ${DURATION_S} s, ${values.source ? 'working tree' : `src/ of ${short}`}`,
);

const servers = new Map<string, ServerProcess>();
const checks: Record<string, string[]> = {};
const runs: Run[] = [];
try {
  for (const c of CONTENDERS) {
    const launch = { ...c, runtime, ...(serverCore === undefined ? {} : { core: serverCore }) };
    const server = await ServerProcess.start(launch, await freePort());
    servers.set(c.name, server);
    checks[c.name] = await check(server.port, referenceOf(c.name) !== c.name);
    if (checks[c.name]!.length > 0) log(`check: ${c.name}: ${checks[c.name]!.join('; ')}`);
  }
  for (let round = 0; round <= ROUNDS; round++) {
    const turn = round % CONTENDERS.length;
    for (const c of [...CONTENDERS.slice(turn), ...CONTENDERS.slice(0, turn)]) {
      const settings = { connections: CONNECTIONS, durationS: round === 0 ? WARMUP_S : DURATION_S, wrkCore };
      const measure = async (): Promise<Run> => ({
        contender: c.name,
        round,
        ...(await loadRun(servers.get(c.name)!, SCENARIO, settings)),
      });
      let run = await measure();
      // other processes were busy: once the machine is idle again, measure again (twice at most), keep the quietest run
      for (let retry = 0; round > 0 && retry < 2 && run.foreignPct > NOISY_PCT; retry++) {
        log(`${c.name}: ${Math.round(run.foreignPct)} % noise`);
        if ((await waitQuiet(20)) >= NOISY_PCT / 100) break;
        const again = await measure();
        if (again.foreignPct < run.foreignPct) run = again;
      }
      runs.push(run);
      log(
        `${round === 0 ? 'warm-up' : `round ${round}/${ROUNDS}`} ${c.name}: ${Math.round(run.rps)} req/s, p99 ${run.p99Ms.toFixed(1)} ms, ` +
          `${(run.cpuPer1k * 1000).toFixed(1)} µs CPU/req${run.errors ? `, ${run.errors} ERRORS (${run.non2xx} non-2xx)` : ''}, noise ${Math.round(run.foreignPct)} %`,
      );
    }
  }
} finally {
  for (const server of servers.values()) await server.stop();
}

const rows = summarize(runs, CONTENDERS, SCENARIO);
const measured = (name: string) => runs.filter((r) => r.contender === name && r.round > 0);
/** `name`'s CPU per request minus its reference's, round by round (quiet rounds when 3 are), median, in µs. */
function added(name: string): number {
  const ref = new Map(measured(referenceOf(name)).map((r) => [r.round, r]));
  const pairs = measured(name).flatMap((r) => (ref.has(r.round) ? [[r, ref.get(r.round)!] as const] : []));
  const quiet = pairs.filter(([a, b]) => a.foreignPct <= NOISY_PCT && b.foreignPct <= NOISY_PCT);
  return median((quiet.length >= 3 ? quiet : pairs).map(([a, b]) => (a.cpuPer1k - b.cpuPer1k) * 1000));
}
const x = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(2));
const table = rows.map((r) => {
  const non2xx = measured(r.contender).reduce((n, run) => n + run.non2xx, 0);
  const quiet = measured(r.contender).filter((run) => run.foreignPct <= NOISY_PCT);
  const cpus = (quiet.length >= 3 ? quiet : measured(r.contender)).map((run) => run.cpuPer1k * 1000);
  const ok = checks[r.contender]!.length === 0 ? 'ok' : '**failed**';
  const extra = referenceOf(r.contender) === r.contender ? '–' : String(sig(added(r.contender)));
  return (
    `| ${r.title} | ${ok} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.roundsUsed}/${r.rounds} | ${sig(r.p99Ms)} | ${sig(r.cpuPer1k * 1000)} | ` +
    `${sig(Math.min(...cpus), 2)}–${sig(Math.max(...cpus), 2)} | ` +
    `${extra} | ${x(pairedRatio(runs, SCENARIO.name, r.contender, 'json', 'cpuPer1k'))} | ${non2xx} | ${r.errors - non2xx} | ${Math.round(r.maxForeignPct)} |`
  );
});
const failed = Object.entries(checks).filter(([, issues]) => issues.length > 0);
const versions = ['zod', 'valibot', 'arktype', 'typebox', '@valibot/to-json-schema', 'ajv', 'fastify', 'fastify-type-provider-zod']
  .map((p) => `${p} ${packageVersion(p)}`)
  .join(', ');
const meta = machineMeta(wrk);
const command = `node --conditions=source bench/schema-cost.ts --rounds ${ROUNDS} --duration ${DURATION_S} --warmup ${WARMUP_S} --connections ${CONNECTIONS}${values.source ? ' --source' : ` --rev ${values.rev}`}`;
const md = `# Schemas: what validating the body and serializing the reply cost per request

\`${command}\`, ${meta.date.slice(0, 16).replace('T', ' ')} UTC, ${meta.cpu} × ${meta.cores} cores, Node ${meta.node}, ${wrk}.
flotilla: ${values.source ? `the working tree (${meta.commit})` : `src/ of ${short} (${subject}), compiled`}. ${versions}.

\`POST /books\` with a book of five fields (a string of 1–200 characters, an integer, an enum of three, an optional
string, an array of 1–100 chapters, here 3, each a non-empty string and an integer), ${Buffer.byteLength(SCENARIO.body!)} bytes of JSON;
the handler answers 201 with the book, an id and one key no schema declares, which the 201 schema drops.
The same body and response schemas each way (\`bench/services/book-schemas.ts\`); "no schema" is the same route with
none, its handler leaving the key out itself (for each framework). flotilla standalone (\`servers/flotilla-schema.ts\`),
\`env: production\`, \`logging.requests: false\`, its other defaults on (metrics, request id, security headers); Fastify
(\`servers/fastify-zod.ts\`) with \`logger: false\` and nothing else.
Every server ${values.source ? 'run from its .ts sources' : 'compiled to JavaScript'}, pinned to core ${serverCore ?? '–'}, wrk (1 thread, ${CONNECTIONS} keep-alive connections) on core
${wrkCore ?? '–'}; a warm-up run of ${WARMUP_S} s each, then ${ROUNDS} rounds of ${DURATION_S} s, the order turned by one each round; medians.
Machine busy before the start: ${Math.round(busy * 100)} %.

- **checks**: before measuring, 201 with exactly the declared keys (with and without the optional field) and, but for
  "no schema", 400 for each of: ${Object.keys(INVALID).join(', ')}.${failed.length === 0 ? ' All passed.' : ` Failed: ${failed.map(([name, issues]) => `\`${name}\`: ${issues.join('; ')}`).join(' · ')}.`}
- **CPU µs/req**: utime + stime of the server process (all its threads) from \`/proc/<pid>/stat\` over the run ÷ the
  requests wrk completed; the median, and the lowest and highest over the rounds used. **added**: that minus the no-schema route's of the same framework, round by
  round, median: what the schemas cost. **÷ JSON Schema**: CPU
  per request ÷ the JSON Schema case's, round by round, median.
- **noise %**: CPU of every other process (and steal) on the machine during the run, in % of one core (the highest
  among the rounds used); a run above ${NOISY_PCT} % is measured again once the machine is idle, and left out of the medians
  when 3 quieter rounds exist (rounds column: used/measured). The machine is a VM shared with other work: a slow spell of the
  host does not always show here (runs at twice the usual CPU per request with 0 % noise happen), hence the min–max.

| contender | checks | req/s | rounds | p99 ms | CPU µs/req | CPU µs/req, min–max | added µs/req | CPU ÷ JSON Schema | non-2xx | other errors | noise % |
|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|
${table.join('\n')}
`;
writeFileSync(`${ROOT}bench/results/schema-cost.md`, md);
writeFileSync(
  `${ROOT}bench/results/schema-cost.json`,
  `${JSON.stringify({ meta: { ...meta, flotilla: values.source ? 'working tree' : short, rounds: ROUNDS, durationS: DURATION_S, warmupS: WARMUP_S, connections: CONNECTIONS, busyAtStartPct: Math.round(busy * 100) }, checks, rows, runs }, null, 2)}\n`,
);
process.stdout.write(md);
