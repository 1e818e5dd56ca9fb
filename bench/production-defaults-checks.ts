/**
 * What each production-default check costs per request, in process, beside the code it replaced:
 * the functions themselves, from `src/` as of `--baseline REV` (extracted with `git archive`) and from
 * the working tree, called alike on the same inputs in one process. Over sockets
 * (`bench/production-defaults-cost.ts`) rounds on a shared VM spread by tens of microseconds per
 * request, so a check of a few hundred nanoseconds is lost there; here each measurement is a million
 * calls, and the difference is taken round by round.
 *
 * The checks, each with what a request hands it:
 * - `clientOf` behind `trustProxy: 1`: a request with `X-Forwarded-For`, `-Proto` and `-Host` (the
 *   addresses and host now validated), and one without them;
 * - `readJsonBody`: a 200-byte JSON body with multi-byte UTF-8 and `Content-Type: application/json;
 *   charset=utf-8` (the media type now parsed by `fast-content-type-parse`, the bytes decoded strictly);
 * - the CORS step of an App with one allowed origin, for a request from it (`Vary: Origin` now appended,
 *   and appended again when the reply is written; the origin compared without case).
 *
 * Method: a warm-up, then `--rounds` rounds (at least 5), each running every check `--calls` times on
 * one side then the other, the order turned every round; CPU time from `process.cpuUsage()`; medians,
 * and the difference current − base taken round by round. Pinned to core 0 when there are two.
 *
 *   npm run bench:defaults:checks -- --baseline 8cb2d5f [--rounds 9] [--calls 1000000]
 *
 * Writes bench/results/production-defaults-checks.md and .json (`--out NAME`).
 */
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveRevision } from './lib/build.ts';
import { machineMeta } from './lib/meta.ts';
import { BODY } from './lib/production-defaults-cases.ts';
import { ROOT } from './lib/server-process.ts';
import { median, sig } from './lib/stats.ts';
import { ORIGIN } from './services/data.ts';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '9' },
    calls: { type: 'string', default: '1000000' },
    out: { type: 'string', default: 'production-defaults-checks' },
    // writes the .md again from the .json of the last run, measuring nothing
    report: { type: 'boolean', default: false },
  },
});
const LIMIT_US = 1;
const MIN_ROUNDS = 5;
const SIDES = ['base', 'current'] as const;
type Side = (typeof SIDES)[number];
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const log = (line: string) => process.stderr.write(`${line}\n`);
const out = `${ROOT}bench/results/${values.out}`;
if (values.report) {
  const md = report(JSON.parse(readFileSync(`${out}.json`, 'utf8')) as Saved);
  writeFileSync(`${out}.md`, md);
  process.stdout.write(md);
  process.exit(0);
}
if (values.baseline === undefined) throw new Error('--baseline REV: the revision before the checks (e.g. 8cb2d5f)');
if (!(rounds >= MIN_ROUNDS)) throw new Error(`--rounds: at least ${MIN_ROUNDS}`);
const machine = machineMeta('');
if (Number(machine['cores']) >= 2) execFileSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });

// the base side's src/, beside a link to this repository's node_modules so its imports resolve
const baseline = { rev: values.baseline, ...resolveRevision(values.baseline) };
const baseRoot = mkdtempSync(join(tmpdir(), 'flotilla-base-src-'));
process.once('exit', () => rmSync(baseRoot, { recursive: true, force: true }));
mkdirSync(baseRoot, { recursive: true });
execFileSync('sh', ['-c', `git archive ${baseline.commit} src | tar -x -C ${baseRoot}`], { cwd: ROOT });
symlinkSync(join(ROOT, 'node_modules'), join(baseRoot, 'node_modules'), 'dir');
const roots: Record<Side, string> = { base: `${baseRoot}/`, current: ROOT };

type ClientOf = (req: IncomingMessage, trust: unknown) => { ip: string };
type CompileTrust = (setting: number) => unknown;
type ReadJsonBody = (req: IncomingMessage, limit: number) => Promise<unknown>;
type CreateCors = (config: object) => ((req: IncomingMessage, res: ServerResponse) => boolean) & { vary?: (res: ServerResponse) => void };

/** A request as the checks read it: headers, the socket's peer, and a body's events. */
function fakeRequest(headers: Record<string, string>): IncomingMessage {
  return Object.assign(new EventEmitter(), {
    headers,
    socket: { remoteAddress: '127.0.0.1' },
    method: 'GET',
    pause() {},
  }) as unknown as IncomingMessage;
}

/** A response as the CORS step writes it: a header map, nothing sent. */
function fakeResponse(): ServerResponse {
  const headers = new Map<string, unknown>();
  return {
    headersSent: false,
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader(name: string, value: unknown) {
      headers.set(name.toLowerCase(), value);
      return this;
    },
  } as unknown as ServerResponse;
}

interface Check {
  name: string;
  title: string;
  /** One request's worth of the check, on one side. */
  run: Record<Side, () => unknown>;
}

const PROXIED = {
  host: '127.0.0.1:3000',
  'x-forwarded-for': '203.0.113.7',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'shop.example',
};
const bytes = Buffer.from(BODY);
const jsonHeaders = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length) };
const corsConfig = {
  origins: [ORIGIN],
  methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
  allowedHeaders: [],
  exposedHeaders: ['X-Request-Id'],
  credentials: false,
  maxAge: 600,
};

const checks: Check[] = [
  { name: 'proxy', title: '`clientOf`, `trustProxy: 1`, `X-Forwarded-For`, `-Proto`, `-Host`', run: {} as Check['run'] },
  { name: 'proxy-none', title: '`clientOf`, `trustProxy: 1`, no forwarding header', run: {} as Check['run'] },
  { name: 'json', title: `\`readJsonBody\`, ${bytes.length} bytes of JSON with multi-byte UTF-8`, run: {} as Check['run'] },
  { name: 'cors', title: 'the CORS step, a request from the allowed origin, `Vary` at the write', run: {} as Check['run'] },
];
/** Bodies are read by an awaited promise: these checks run their calls in an async loop. */
const asynchronous = new Set(['json']);

for (const side of SIDES) {
  const root = roots[side];
  const proxy = (await import(`${root}src/app/headers/trusted-proxy.ts`)) as { clientOf: ClientOf; compileTrust: CompileTrust };
  const json = (await import(`${root}src/app/bodies/json.ts`)) as { readJsonBody: ReadJsonBody };
  const { createCors } = (await import(`${root}src/app/headers/cors.ts`)) as { createCors: CreateCors };
  const trust = proxy.compileTrust(1);
  const proxied = fakeRequest(PROXIED);
  const plain = fakeRequest({ host: '127.0.0.1:3000' });
  const cors = createCors(corsConfig);
  const fromOrigin = fakeRequest({ host: '127.0.0.1:3000', origin: ORIGIN });
  (checks[0] as Check).run[side] = () => proxy.clientOf(proxied, trust);
  (checks[1] as Check).run[side] = () => proxy.clientOf(plain, trust);
  (checks[2] as Check).run[side] = () => {
    const req = fakeRequest(jsonHeaders);
    const parsed = json.readJsonBody(req, 1_048_576);
    req.emit('data', bytes);
    req.emit('end');
    return parsed;
  };
  (checks[3] as Check).run[side] = () => {
    const res = fakeResponse();
    cors(fromOrigin, res);
    cors.vary?.(res);
    return res;
  };
}

// the same answers on both sides
for (const check of checks) {
  const [base, current] = await Promise.all(SIDES.map((side) => check.run[side]()));
  const shown = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'function' ? undefined : x));
  if (check.name !== 'cors' && shown(base) !== shown(current))
    throw new Error(`${check.name}: base ${shown(base)}, current ${shown(current)}`);
}

/** CPU nanoseconds per call of `count` calls. */
async function measure(check: Check, side: Side, count: number): Promise<number> {
  const run = check.run[side];
  const start = process.cpuUsage();
  if (asynchronous.has(check.name)) for (let i = 0; i < count; i++) await run();
  else for (let i = 0; i < count; i++) run();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / count;
}

log(`warming up: ${calls / 10} calls of each check on each side`);
for (const check of checks) for (const side of SIDES) await measure(check, side, calls / 10);

const samples: { check: string; side: Side; round: number; ns: number }[] = [];
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? SIDES : (['current', 'base'] as const);
  for (const check of checks)
    for (const side of order) samples.push({ check: check.name, side, round, ns: await measure(check, side, calls) });
  const now = checks.map((c) => {
    const of = (side: Side) => sig(samples.find((s) => s.round === round && s.check === c.name && s.side === side)?.ns ?? 0);
    return `${c.name} ${of('base')}/${of('current')}`;
  });
  log(`round ${round}/${rounds} (ns per call, base/current): ${now.join(', ')}`);
}

const rows = checks.map((check) => {
  const of = (side: Side) => samples.filter((s) => s.check === check.name && s.side === side).map((s) => s.ns);
  const base = of('base');
  const current = of('current');
  const deltas = current.map((ns, i) => ns - (base[i] as number));
  return {
    name: check.name,
    title: check.title,
    baseNs: median(base),
    currentNs: median(current),
    deltaNs: median(deltas),
    deltaMin: Math.min(...deltas),
    deltaMax: Math.max(...deltas),
  };
});
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const saved: Saved = { meta: { ...machine, rounds, calls, baseline, head }, samples, rows };
writeFileSync(`${out}.json`, `${JSON.stringify(saved, null, 2)}\n`);
const md = report(saved);
writeFileSync(`${out}.md`, md);
process.stdout.write(md);
process.exit(0);

/** The .json: where and how the run happened, every measurement, and the figures. */
interface Saved {
  meta: Record<string, unknown> & { rounds: number; calls: number; baseline: { short: string; subject: string }; head: string };
  samples: { check: string; side: Side; round: number; ns: number }[];
  rows: { name: string; title: string; baseNs: number; currentNs: number; deltaNs: number; deltaMin: number; deltaMax: number }[];
}

/** The .md of a run. */
function report({ meta, rows }: Saved): string {
  const { rounds, calls, baseline, head } = meta;
  const all = rows.filter((r) => r.name !== 'proxy-none');
  const total = all.reduce((sum, r) => sum + r.deltaNs, 0);
  const worst = all.reduce((sum, r) => sum + r.deltaMax, 0);
  const ns = (n: number) => String(Math.round(n));
  const verdict = (n: number) => (n <= LIMIT_US * 1000 ? 'within' : 'above');
  return `# Production defaults: what each added check costs per request, beside the code before

\`npm run bench:defaults:checks -- --baseline ${baseline.short} --rounds ${rounds} --calls ${calls}\`
(\`bench/production-defaults-checks.ts\`), ${String(meta['date']).slice(0, 16).replace('T', ' ')} UTC, Node ${String(meta['node'])},
${String(meta['cpu'])} × ${String(meta['cores'])} cores (pinned to core 0). **base**: \`src/\` as of ${baseline.short}
(${baseline.subject}); **current**: the working tree at ${head}.

Goal: the added checks cost at most ${LIMIT_US} µs of CPU per request. A request that goes through all of
them (behind a proxy, with a JSON body, from an allowed origin) pays **${ns(total)} ns** more than before
(the sum of the Δ below but the no-header row): **${verdict(total)} 1 µs**. Taking each check's worst
round instead, **${ns(worst)} ns**: ${verdict(worst)} 1 µs.

| check | base ns | current ns | Δ ns (median of rounds) | Δ min to max |
|---|--:|--:|--:|--:|
${rows.map((r) => `| ${r.title} | ${ns(r.baseNs)} | ${ns(r.currentNs)} | **${ns(r.deltaNs)}** | ${ns(r.deltaMin)} to ${ns(r.deltaMax)} |`).join('\n')}

## Method

- The functions of \`src/app/headers/trusted-proxy.ts\`, \`src/app/bodies/json.ts\` and
  \`src/app/headers/cors.ts\` of both sides in one process, the base's from \`git archive ${baseline.short} src\`,
  each called as the pipeline calls it, on stand-ins for the request and the response that hold what the
  check reads (headers, the socket's address, a body's \`data\` and \`end\`; a header map).
- The answers checked equal on both sides first (the address, protocol and host; the parsed body).
- A warm-up of ${calls / 10} calls per check and side, then ${rounds} rounds; in each, for each check, ${calls} calls
  on one side then the other, the order turned every round. CPU per call: \`process.cpuUsage()\` (user +
  system) over the calls; Δ taken round by round and its median shown, with its range. \`readJsonBody\` is
  awaited call by call, so its rounds carry the microtask queue and the garbage of a promise each: its
  range is the widest, in both directions.
- The whole request, over sockets and wrk, beside the code before: \`bench/results/production-defaults-cost.md\`
  (its rounds spread by tens of µs on this shared VM: it shows no regression beyond that spread, and
  cannot resolve one microsecond).
`;
}
