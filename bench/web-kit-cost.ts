/**
 * What two per-request features of the web kit cost, each beside itself switched off, in one run:
 *
 * 1. **CSRF** (docs/guides/csrf.md): a standalone App (`env: production`, no request log line, its other
 *    defaults on) with `POST /items` (a small JSON body, a 201 of it plus an id, no schema), `csrf.enabled:
 *    true` beside `false`, with three kinds of request: a current browser's (`Sec-Fetch-Site: same-origin`
 *    and `Origin: http://127.0.0.1:<port>`), an older browser's (the same `Origin` alone: the check then
 *    compares it with `ctx.host`, its longest path) and curl's (neither header).
 * 2. **Request context** (docs/guides/request-context.md): a plain `node:http` server whose handler answers
 *    a small JSON after one `await`, beside the same handler run inside `asyncLocalStorage.run(store,
 *    handler, ...args)` (as src/utils/context-storage.ts's `runInScope` does it), beside the same plus
 *    `getStore()` read before and after the `await`; and the real App (which always enters the scope) with
 *    a `GET` route that calls `currentContext()` after an `await` beside one that does not.
 *
 * The two sides of each comparison live in one server process (the CSRF Apps on two ports, the other
 * variants on two or three paths), so that a process's luck in heap layout and JIT decisions does not
 * pass for a difference: this script with `WEB_KIT_SERVE=csrf|http|app`, from the TypeScript sources,
 * pinned to core 0, wrk (1 thread, keep-alive) on core 1. After a check of every answer (and that the
 * CSRF check refuses a cross-site request when on, and only then), a warm-up run of each case, then
 * alternating rounds (the cases of each comparison back to back, their order turned every round); CPU
 * per request from `/proc/<pid>/stat`; medians, and the ratios taken round by round. Also, in this
 * process, what `run()` and `getStore()` cost per call, for the resolution HTTP lacks.
 *
 *   npm run bench:web-kit -- [--rounds 12] [--duration 1] [--warmup 2] [--connections 50]
 *   npm run bench:web-kit -- --report   # the .md again from the last run's .json, measuring nothing
 *
 * Writes bench/results/web-kit-cost.md and .json.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ServerProcess as Server } from './lib/server-process.ts';

const SERVE = process.env['WEB_KIT_SERVE'];
/** The body every `POST /items` sends. */
const ITEM = { name: 'widget', sku: 'W-1001', qty: 3, tags: ['blue', 'small'] };

if (SERVE !== undefined) await serve(SERVE, Number(process.env['PORT']));
else await orchestrate();

// ---------------------------------------------------------------------------------------------------
// The servers

/**
 * One server process of the comparison, on 127.0.0.1: `http` (one `node:http` server, the variant chosen by
 * the path), `csrf` (two Apps, `csrf.enabled: true` on `port`, `false` on `WEB_KIT_SECOND_PORT`) or `app`
 * (one App, two routes). Says `ready <port>` on stderr once everything listens.
 */
async function serve(kind: string, port: number): Promise<void> {
  const ready = () => process.stderr.write(`ready ${port}\n`);
  if (kind === 'http') {
    const als = new AsyncLocalStorage<{ id: number }>();
    let n = 0;
    const reply = (res: ServerResponse, status: number, id: number) => {
      const body = JSON.stringify({ ok: status === 200, id });
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    // the same handler shape for all three: one await, then the reply
    const handle = async (store: { id: number }, res: ServerResponse) => {
      await Promise.resolve();
      reply(res, 200, store.id);
    };
    const handleReading = async (store: { id: number }, res: ServerResponse) => {
      const before = als.getStore();
      await Promise.resolve();
      const after = als.getStore();
      // a store lost across the await would be a 500: wrk counts it
      reply(res, before === store && after === store ? 200 : 500, store.id);
    };
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const store = { id: ++n };
      if (req.url === '/run') void als.run(store, handle, store, res);
      else if (req.url === '/read') void als.run(store, handleReading, store, res);
      else void handle(store, res);
    }).listen(port, '127.0.0.1', ready);
    return;
  }
  const { App, currentContext } = await import('flotilla');
  const base = { serviceName: 'web-kit', env: 'production' as const, host: '127.0.0.1', logging: { requests: false } };
  if (kind === 'csrf') {
    const apps = [
      { enabled: true, port },
      { enabled: false, port: Number(process.env['WEB_KIT_SECOND_PORT']) },
    ].map(({ enabled, port }) => {
      const app = new App({ ...base, port, csrf: { enabled } });
      app.registerController({
        routes: () => [
          {
            method: 'POST',
            path: '/items',
            handler: (ctx) => {
              ctx.status(201);
              return { id: 1, ...(ctx.body as object) };
            },
          },
        ],
      });
      return app;
    });
    const listening = apps.map((app) => app.listen());
    for (const app of apps) await app.ready();
    ready();
    await Promise.all(listening);
    return;
  }
  if (kind !== 'app') throw new Error(`WEB_KIT_SERVE: no '${kind}'`);
  const app = new App({ ...base, port });
  app.registerController({
    routes: () => [
      {
        method: 'GET',
        path: '/plain',
        handler: async (ctx) => {
          await Promise.resolve();
          return { ok: true, requestId: ctx.requestId };
        },
      },
      {
        method: 'GET',
        path: '/context',
        handler: async (ctx) => {
          await Promise.resolve();
          const context = currentContext();
          if (context?.requestId !== ctx.requestId) throw new Error('currentContext() lost the request');
          return { ok: true, requestId: context.requestId };
        },
      },
    ],
  });
  const listening = app.listen();
  await app.ready();
  ready();
  await listening;
}

// ---------------------------------------------------------------------------------------------------
// The measurement

async function orchestrate(): Promise<void> {
  const { machineMeta } = await import('./lib/meta.ts');
  const { CLK_TCK, cpuTicks, cpuTimes, waitQuiet } = await import('./lib/proc.ts');
  const { freePort, ServerProcess } = await import('./lib/server-process.ts');
  const { median, sig } = await import('./lib/stats.ts');
  const { NOISY_PCT } = await import('./lib/summary.ts');
  const { ensureWrk, runWrk } = await import('./lib/wrk.ts');

  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '12' },
      duration: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      // writes the .md again from the .json of the last run, measuring nothing (for changes to the report's wording)
      report: { type: 'boolean', default: false },
    },
  });
  const out = fileURLToPath(new URL('./results/web-kit-cost', import.meta.url));
  const saved = values.report ? (JSON.parse(readFileSync(`${out}.json`, 'utf8')) as Saved) : undefined;
  const ROUNDS = saved?.meta.rounds ?? Math.max(3, Number(values.rounds));
  // wrk takes whole seconds
  const DURATION_S = saved?.meta.durationS ?? Math.max(1, Math.round(Number(values.duration)));
  const WARMUP_S = saved?.meta.warmupS ?? Math.max(1, Math.round(Number(values.warmup)));
  const CONNECTIONS = saved?.meta.connections ?? Number(values.connections);
  /** No second measurement of a noisy run once the run has gone on this long: the whole stays near 4 minutes. */
  const RETRY_UNTIL_S = 190;
  const pin = (saved?.meta.cores ?? availableParallelism()) >= 2;
  const [serverCore, wrkCore] = pin ? [0, 1] : [undefined, undefined];
  const t0 = performance.now();
  const elapsedS = () => (performance.now() - t0) / 1000;
  const log = (line: string) => process.stderr.write(`[${elapsedS().toFixed(1).padStart(5)} s] ${line}\n`);

  const SERVERS = ['csrf', 'http', 'app'] as const;
  type ServerName = (typeof SERVERS)[number];
  const JSON_BODY = JSON.stringify(ITEM);
  const origin = (port: number) => `http://127.0.0.1:${port}`;

  interface Case {
    /** `<group>/<side>`. */
    key: string;
    group: string;
    side: string;
    title: string;
    server: ServerName;
    /** The csrf process's second App (\`csrf.enabled: false\`), on its second port. */
    second?: boolean;
    path: string;
    body?: string;
    headers: (port: number) => Record<string, string>;
  }
  const csrfCase = (group: string, title: string, headers: (port: number) => Record<string, string>): Case[] =>
    (['on', 'off'] as const).map((side) => ({
      key: `${group}/${side}`,
      group,
      side,
      title: `${title}, csrf ${side}`,
      server: 'csrf',
      second: side === 'off',
      path: '/items',
      body: JSON_BODY,
      headers: (port) => ({ 'Content-Type': 'application/json', Accept: 'application/json', ...headers(port) }),
    }));
  const GROUPS: { name: string; title: string; cases: Case[]; pairs: [string, string][] }[] = [
    {
      name: 'csrf-browser',
      title: 'POST /items, a current browser: `Sec-Fetch-Site: same-origin` and `Origin`',
      cases: csrfCase('csrf-browser', 'browser', (port) => ({ 'Sec-Fetch-Site': 'same-origin', Origin: origin(port) })),
      pairs: [['on', 'off']],
    },
    {
      name: 'csrf-origin',
      title: 'POST /items, an older browser: `Origin` alone (compared with the host)',
      cases: csrfCase('csrf-origin', 'Origin only', (port) => ({ Origin: origin(port) })),
      pairs: [['on', 'off']],
    },
    {
      name: 'csrf-none',
      title: 'POST /items, curl-like: neither header',
      cases: csrfCase('csrf-none', 'no browser headers', () => ({})),
      pairs: [['on', 'off']],
    },
    {
      name: 'als',
      title: '`node:http`, a small JSON after one `await`',
      cases: [
        { side: 'plain', title: 'plain handler', path: '/plain' },
        { side: 'run', title: 'in `als.run(store, handler)`', path: '/run' },
        { side: 'read', title: 'in `als.run`, `getStore()` before and after the await', path: '/read' },
      ].map((c) => ({
        ...c,
        key: `als/${c.side}`,
        group: 'als',
        server: 'http' as const,
        headers: () => ({ Accept: 'application/json' }),
      })),
      pairs: [
        ['run', 'plain'],
        ['read', 'plain'],
        ['read', 'run'],
      ],
    },
    {
      name: 'app',
      title: 'flotilla App, `GET` route with one `await`',
      cases: [
        { side: 'no-read', title: 'does not read the context', path: '/plain' },
        { side: 'read', title: 'calls `currentContext()` after the await', path: '/context' },
      ].map((c) => ({
        ...c,
        key: `app/${c.side}`,
        group: 'app',
        server: 'app' as const,
        headers: () => ({ Accept: 'application/json' }),
      })),
      pairs: [['read', 'no-read']],
    },
  ];
  const CASES = GROUPS.flatMap((g) => g.cases);

  interface Sample {
    key: string;
    round: number;
    requests: number;
    rps: number;
    p99Ms: number;
    cpuUs: number;
    errors: number;
    non2xx: number;
    noisePct: number;
  }
  /** The .json: where and how the run happened, the in-process figures and every run (plus the comparisons, for readers). */
  interface Saved {
    meta: ReturnType<typeof machineMeta> & {
      rounds: number;
      durationS: number;
      warmupS: number;
      connections: number;
      cores: number;
      loadBefore: number[];
      busyAtStartPct: number;
    };
    inProcessNs: Record<'call' | 'run' | 'runRead', number[]>;
    samples: Sample[];
  }

  const servers = new Map<ServerName, Server>();
  /** The port of the csrf process's second App (\`csrf.enabled: false\`). */
  const secondPort = await freePort();
  const portOf = (c: Case) => (c.second ? secondPort : servers.get(c.server)!.port);

  async function measure(server: Server, c: Case, durationS: number, round: number): Promise<Sample> {
    const port = portOf(c);
    const machineBefore = cpuTimes().get('cpu');
    const before = cpuTicks(server.pid);
    const wrk = await runWrk({
      port,
      path: c.path,
      ...(c.body === undefined ? {} : { body: c.body }),
      connections: CONNECTIONS,
      durationS,
      headers: c.headers(port),
      ...(wrkCore === undefined ? {} : { core: wrkCore }),
    });
    const cpuS = (cpuTicks(server.pid) - before) / CLK_TCK;
    const machineAfter = cpuTimes().get('cpu');
    const machineS = machineBefore && machineAfter ? machineAfter.busy - machineBefore.busy + machineAfter.steal - machineBefore.steal : 0;
    const e = wrk.errors;
    return {
      key: c.key,
      round,
      requests: wrk.requests,
      rps: wrk.rps,
      p99Ms: wrk.latencyMs.p99,
      cpuUs: (cpuS * 1e6) / Math.max(1, wrk.requests),
      errors: e.connect + e.read + e.write + e.status + e.timeout,
      non2xx: e.status,
      noisePct: Math.max(0, ((machineS - cpuS - wrk.cpuS) / wrk.durationS) * 100),
    };
  }

  /** One request on a fresh connection: status, headers, body. */
  const ask = (port: number, method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.once('error', reject);
      });
      req.once('error', reject);
      req.end(body);
    });

  /** What every case must answer before it is measured, and what the CSRF check must refuse (only when on). */
  async function check(): Promise<string[]> {
    const issues: string[] = [];
    for (const c of CASES) {
      const port = portOf(c);
      const r = await ask(port, c.body === undefined ? 'GET' : 'POST', c.path, c.headers(port), c.body);
      const expected = c.body === undefined ? 200 : 201;
      if (r.status !== expected) issues.push(`${c.key}: ${r.status}, not ${expected}: ${r.body.slice(0, 200)}`);
      else if (c.body !== undefined && JSON.stringify(JSON.parse(r.body)) !== JSON.stringify({ id: 1, ...ITEM }))
        issues.push(`${c.key}: body ${r.body.slice(0, 200)}`);
      else if (c.group === 'app' && JSON.parse(r.body).requestId !== r.headers['x-request-id'])
        issues.push(`${c.key}: requestId differs from X-Request-Id`);
    }
    const crossSite = [{ 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }, { Origin: 'https://evil.example' }];
    for (const headers of crossSite) {
      for (const [name, port, expected] of [
        ['csrf on', servers.get('csrf')!.port, 403],
        ['csrf off', secondPort, 201],
      ] as const) {
        const r = await ask(port, 'POST', '/items', { 'Content-Type': 'application/json', ...headers }, JSON_BODY);
        if (r.status !== expected) issues.push(`${name}, cross-site ${JSON.stringify(headers)}: ${r.status}, not ${expected}`);
      }
    }
    return issues;
  }

  /** ns per call of `fn()`, `als.run(store, fn)` and `als.run(store, fn)` with `fn` reading `getStore()`, in this process (unpinned), alternating batches. */
  function inProcess(): Record<'call' | 'run' | 'runRead', number[]> {
    const als = new AsyncLocalStorage<object>();
    const store = {};
    let sink = 0;
    const fn = (x: number) => {
      sink += x;
    };
    const fnRead = (x: number) => {
      sink += als.getStore() === store ? x : 0;
    };
    const N = 1_000_000;
    const ways = {
      call: () => {
        for (let i = 0; i < N; i++) fn(i);
      },
      run: () => {
        for (let i = 0; i < N; i++) als.run(store, fn, i);
      },
      runRead: () => {
        for (let i = 0; i < N; i++) als.run(store, fnRead, i);
      },
    };
    const out = { call: [] as number[], run: [] as number[], runRead: [] as number[] };
    for (let batch = 0; batch < 8; batch++) {
      for (const [name, way] of Object.entries(ways) as [keyof typeof ways, () => void][]) {
        const started = process.hrtime.bigint();
        way();
        const ns = Number(process.hrtime.bigint() - started) / N;
        if (batch > 0) out[name].push(ns); // batch 0: warm-up
      }
    }
    if (sink === -1) log('unreachable');
    return out;
  }

  /** Everything measured: the servers, their checks, the rounds, and the in-process figures. */
  async function measureAll(): Promise<Saved> {
    const wrkVersion = ensureWrk();
    const loadBefore = (await import('node:os')).loadavg();
    const busy = await waitQuiet(30, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
    if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
    const micro = inProcess();
    log(
      `in-process: call ${median(micro.call).toFixed(1)} ns, run ${median(micro.run).toFixed(1)} ns, run + getStore ${median(micro.runRead).toFixed(1)} ns`,
    );

    const samples: Sample[] = [];
    let issues: string[] = [];
    try {
      for (const name of SERVERS) {
        const launch = {
          entry: 'web-kit-cost.ts',
          script: ['bench/web-kit-cost.ts'],
          readyLines: 1,
          env: { WEB_KIT_SERVE: name, WEB_KIT_SECOND_PORT: String(secondPort), NODE_ENV: 'production' },
          ...(serverCore === undefined ? {} : { core: serverCore }),
        };
        servers.set(name, await ServerProcess.start(launch, await freePort()));
      }
      issues = await check();
      if (issues.length > 0) throw new Error(`checks failed:\n${issues.join('\n')}`);
      for (const c of CASES) await measure(servers.get(c.server)!, c, WARMUP_S, 0);
      log(`warmed up; ${ROUNDS} rounds of ${DURATION_S} s, ${CASES.length} cases, ${CONNECTIONS} connections`);
      for (let round = 1; round <= ROUNDS; round++) {
        const groups = [...GROUPS.slice(round % GROUPS.length), ...GROUPS.slice(0, round % GROUPS.length)];
        for (const g of groups) {
          const turn = round % g.cases.length;
          for (const c of [...g.cases.slice(turn), ...g.cases.slice(0, turn)]) {
            const server = servers.get(c.server)!;
            let sample = await measure(server, c, DURATION_S, round);
            // other processes were busy: measure again once (time allowing), keep the quieter run
            if (sample.noisePct > NOISY_PCT && elapsedS() < RETRY_UNTIL_S) {
              log(`${c.key}: ${Math.round(sample.noisePct)} % noise, measuring again`);
              await waitQuiet(5, NOISY_PCT / 100);
              const again = await measure(server, c, DURATION_S, round);
              if (again.noisePct < sample.noisePct) sample = again;
            }
            samples.push(sample);
            log(
              `round ${round}/${ROUNDS} ${c.key}: ${Math.round(sample.rps)} req/s, ${sample.cpuUs.toFixed(1)} µs CPU/req, ` +
                `noise ${Math.round(sample.noisePct)} %${sample.errors ? `, ${sample.errors} ERRORS (${sample.non2xx} non-2xx)` : ''}`,
            );
          }
        }
      }
    } finally {
      for (const server of servers.values()) await server.stop();
    }
    const meta = machineMeta(wrkVersion);
    return {
      meta: {
        ...meta,
        cores: availableParallelism(),
        rounds: ROUNDS,
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        connections: CONNECTIONS,
        loadBefore,
        busyAtStartPct: Math.round(busy * 100),
      },
      inProcessNs: micro,
      samples,
    };
  }

  const data = saved ?? (await measureAll());
  const { meta, samples } = data;
  const micro = data.inProcessNs;
  const wrkVersion = String(meta.wrk);
  const loadBefore = meta.loadBefore;
  const busy = meta.busyAtStartPct / 100;

  // ---- figures
  const of = (key: string) => samples.filter((s) => s.key === key);
  /** The quiet rounds when at least 3 are, else all. */
  const used = (key: string) => {
    const quiet = of(key).filter((s) => s.noisePct <= NOISY_PCT);
    return quiet.length >= 3 ? quiet : of(key);
  };
  /** a ÷ b (or a − b) round by round, over the rounds both were quiet when at least 3 are: the values. */
  function paired(a: string, b: string, f: (x: Sample, y: Sample) => number): number[] {
    const other = new Map(of(b).map((s) => [s.round, s]));
    const pairs = of(a).flatMap((s) => (other.has(s.round) ? [[s, other.get(s.round)!] as const] : []));
    const quiet = pairs.filter(([x, y]) => x.noisePct <= NOISY_PCT && y.noisePct <= NOISY_PCT);
    return (quiet.length >= 3 ? quiet : pairs).map(([x, y]) => f(x, y));
  }
  const range = (list: number[], digits = 3) => `${sig(Math.min(...list), digits)}–${sig(Math.max(...list), digits)}`;
  const fixed = (v: number, d = 2) => v.toFixed(d);
  const spread = (list: number[]) => ((Math.max(...list) - Math.min(...list)) / median(list)) * 100;

  interface Comparison {
    group: string;
    a: string;
    b: string;
    cpuRatio: number;
    cpuRatioRange: [number, number];
    rpsRatio: number;
    rpsRatioRange: [number, number];
    addedUs: number;
    addedUsRange: [number, number];
    roundsAbove1: number;
    rounds: number;
  }
  const comparisons: Comparison[] = GROUPS.flatMap((g) =>
    g.pairs.map(([sa, sb]) => {
      const a = `${g.name}/${sa}`;
      const b = `${g.name}/${sb}`;
      const cpu = paired(a, b, (x, y) => x.cpuUs / y.cpuUs);
      const rps = paired(a, b, (x, y) => x.rps / y.rps);
      const added = paired(a, b, (x, y) => x.cpuUs - y.cpuUs);
      return {
        group: g.name,
        a: sa,
        b: sb,
        cpuRatio: median(cpu),
        cpuRatioRange: [Math.min(...cpu), Math.max(...cpu)] as [number, number],
        rpsRatio: median(rps),
        rpsRatioRange: [Math.min(...rps), Math.max(...rps)] as [number, number],
        addedUs: median(added),
        addedUsRange: [Math.min(...added), Math.max(...added)] as [number, number],
        roundsAbove1: cpu.filter((r) => r > 1).length,
        rounds: cpu.length,
      };
    }),
  );
  const cmp = (group: string, a: string, b: string) => comparisons.find((c) => c.group === group && c.a === a && c.b === b)!;
  const cpuOf = (key: string) => median(used(key).map((s) => s.cpuUs));

  const figureRows = (g: (typeof GROUPS)[number]) =>
    g.cases.map((c) => {
      const list = used(c.key);
      const all = of(c.key);
      const cpus = list.map((s) => s.cpuUs);
      const rps = list.map((s) => s.rps);
      return (
        `| ${c.title} | ${Math.round(median(rps)).toLocaleString('en-US')} | ${range(
          rps.map((r) => r / 1000),
          3,
        )}k | ` +
        `${sig(median(cpus))} | ${range(cpus)} | ${Math.round(spread(cpus))} | ${sig(median(list.map((s) => s.p99Ms)))} | ` +
        `${list.length}/${all.length} | ${all.reduce((n, s) => n + s.non2xx, 0)} | ${all.reduce((n, s) => n + s.errors - s.non2xx, 0)} | ` +
        `${Math.round(Math.max(...list.map((s) => s.noisePct)))} |`
      );
    });
  const ratioRow = (c: Comparison, label: string) =>
    `| ${label} | ${fixed(c.cpuRatio)} | ${fixed(c.cpuRatioRange[0])}–${fixed(c.cpuRatioRange[1])} | ${c.roundsAbove1}/${c.rounds} | ` +
    `${sig(c.addedUs, 2)} | ${sig(c.addedUsRange[0], 2)} to ${sig(c.addedUsRange[1], 2)} | ${fixed(c.rpsRatio)} | ${fixed(c.rpsRatioRange[0])}–${fixed(c.rpsRatioRange[1])} |`;
  const FIG_HEAD =
    '| case | req/s | req/s min–max | CPU µs/req | CPU µs/req min–max | CPU spread % | p99 ms | rounds | non-2xx | other errors | noise % |\n' +
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|';
  const RATIO_HEAD =
    '| comparison | CPU/req ratio | min–max over rounds | rounds above 1 | added µs/req | min to max | req/s ratio | min–max |\n' +
    '|---|--:|--:|--:|--:|--:|--:|--:|';
  const sections = GROUPS.map((g) => `### ${g.title}\n\n${FIG_HEAD}\n${figureRows(g).join('\n')}\n`);

  // ---- the reading, from the figures
  /** How many rounds had `a` take more CPU per request than `b`; 80 % of them or more on one side (or 20 % or fewer) is a consistent difference. */
  const verdict = (c: Comparison) => {
    const share = c.roundsAbove1 / c.rounds;
    return `higher in ${c.roundsAbove1} of ${c.rounds} rounds${share >= 0.8 || share <= 0.2 ? '' : ': within the noise'}`;
  };
  const pct = (ratio: number) => `${ratio >= 1 ? '+' : '−'}${Math.abs((ratio - 1) * 100).toFixed(1)} %`;
  const us = (v: number) => `${v < 0 ? '−' : ''}${sig(Math.abs(v), 2)} µs`;
  const csrfB = cmp('csrf-browser', 'on', 'off');
  const csrfO = cmp('csrf-origin', 'on', 'off');
  const csrfN = cmp('csrf-none', 'on', 'off');
  const alsRun = cmp('als', 'run', 'plain');
  const alsRead = cmp('als', 'read', 'plain');
  const appRead = cmp('app', 'read', 'no-read');
  const noiseMax = Math.round(Math.max(...samples.map((s) => s.noisePct)));
  const runNs = median(micro.run) - median(micro.call);
  const readNs = median(micro.runRead) - median(micro.run);
  const ratioSpan = median(comparisons.map((c) => (c.cpuRatioRange[1] - c.cpuRatioRange[0]) * 100));
  const spreads = CASES.map((c) => spread(used(c.key).map((s) => s.cpuUs)));
  const host =
    noiseMax > NOISY_PCT
      ? `Other processes took up to ${noiseMax} % of a core during some runs (see the noise column).`
      : `Other processes took ${noiseMax} % of a core at most during any run, yet one case's CPU per request varied by ` +
        `${Math.round(median(spreads))} % between rounds (median over the cases; up to ${Math.round(Math.max(...spreads))} %): the shared ` +
        `host's other tenants, which the guest does not see (no steal reported). The side-by-side ratios, taken seconds ` +
        `apart, share that noise; their medians over ${ROUNDS} rounds are the figures to read, and a difference of a few ` +
        `per cent with rounds on both sides of 1 is not resolved.`;
  const reading =
    `CSRF protection on, against off in the same process, changes the CPU per request by ${us(csrfB.addedUs)} for a current ` +
    `browser's POST (${pct(csrfB.cpuRatio)} of ${sig(cpuOf('csrf-browser/off'))} µs; ${verdict(csrfB)}), by ${us(csrfO.addedUs)} for an ` +
    `older browser's, whose \`Origin\` is compared with the host (${pct(csrfO.cpuRatio)}; ${verdict(csrfO)}), and by ${us(csrfN.addedUs)} ` +
    `for curl's (${pct(csrfN.cpuRatio)}; ${verdict(csrfN)}). Entering \`AsyncLocalStorage\` once per request changes a plain ` +
    `\`node:http\` server's by ${us(alsRun.addedUs)} (${pct(alsRun.cpuRatio)} of ${sig(cpuOf('als/plain'))} µs; ${verdict(alsRun)}), ` +
    `and with \`getStore()\` read before and after an \`await\` by ${us(alsRead.addedUs)} (${pct(alsRead.cpuRatio)}; ${verdict(alsRead)}). ` +
    `In-process, \`run()\` costs ${runNs.toFixed(0)} ns a call more than a direct call (Node ${process.versions.node} allocates two ` +
    `context frames per \`run\`) and a \`getStore()\` inside it ${readNs.toFixed(0)} ns more: ` +
    `${((runNs / 1000 / cpuOf('als/plain')) * 100).toFixed(1)} % of the plain server's CPU per request, which wrk on this machine cannot ` +
    `resolve (a comparison's round-by-round CPU ratios span ${ratioSpan.toFixed(0)} percentage points, median over the comparisons). ` +
    `In the App, which always enters the scope, a route that calls \`currentContext()\` costs ${us(appRead.addedUs)} per request more ` +
    `than one that does not (${pct(appRead.cpuRatio)} of ${sig(cpuOf('app/no-read'))} µs; ${verdict(appRead)}): that is the context ` +
    `built on the first read (an \`AbortController\`, \`AbortSignal.any\` with the App's deadline, a child logger), not the ` +
    `storage. ${host}`;

  const command = `npm run bench:web-kit -- --rounds ${ROUNDS} --duration ${DURATION_S} --warmup ${WARMUP_S} --connections ${CONNECTIONS}`;
  const md = `# Web kit: what CSRF protection and the request context cost per request

\`${command}\` (\`bench/web-kit-cost.ts\`), ${meta.date.slice(0, 16).replace('T', ' ')} UTC,
${meta.cpu} × ${meta.cores} cores, Linux ${meta.kernel}, Node ${meta.node}, ${wrkVersion}; flotilla: the working tree
(${meta.commit}), from its .ts sources.
Machine before the start: load average ${loadBefore.map((l) => l.toFixed(2)).join(', ')}, ${Math.round(busy * 100)} % busy over the last second;
the highest noise of any run: ${noiseMax} % of a core (other processes; see below).

## Method

- **CSRF**: a standalone App, \`env: production\`, \`logging.requests: false\`, its other defaults on (metrics, request
  id, security headers, CORS with no origin, compression), one route \`POST /items\` (no schema) answering 201 with the
  ${Buffer.byteLength(JSON_BODY)}-byte JSON body it got plus an id: two such Apps in one process, on two ports, one with
  \`csrf.enabled: true\` (the default), one with \`false\`. Three kinds of request, each on both: a current browser's
  (\`Sec-Fetch-Site: same-origin\`, \`Origin: http://127.0.0.1:<port>\`: the check reads both headers and passes on the
  first), an older browser's (the \`Origin\` alone: the check compares its host with \`ctx.host\`, which it computes),
  curl's (neither header: two header reads). Before measuring, each case answers 201 with the body, and a cross-site request
  (\`Sec-Fetch-Site: cross-site\` with a foreign \`Origin\`, and a foreign \`Origin\` alone) gets 403 with the check on
  and 201 with it off.
- **Request context, \`node:http\`**: one \`createServer\` whose request listener allocates a small store and, by the
  path, calls a handler that awaits one resolved promise, then answers \`{"ok":true,"id":<n>}\` (\`JSON.stringify\`,
  \`writeHead\`, \`end\`). **plain** (\`/plain\`) calls the handler; **run** (\`/run\`) calls it inside
  \`asyncLocalStorage.run(store, handler, store, res)\`, as \`runInScope\` does (\`src/utils/context-storage.ts\`);
  **read** (\`/read\`) does the same and reads \`getStore()\` before and after the await (a store other than the
  request's would be a 500, which wrk would count). Node ${meta.node}'s \`AsyncLocalStorage\` (its default
  implementation, on \`AsyncContextFrame\`: \`run\` allocates a frame on entry and another on exit).
- **Request context, the App**: one App (same settings as above) with two \`GET\` routes whose handler awaits one
  resolved promise and answers \`{ ok, requestId }\`: \`/plain\` takes \`ctx.requestId\`, \`/context\` calls
  \`currentContext()\` and takes its \`requestId\` (checked equal to \`ctx.requestId\`). The App enters the scope for
  every request either way: the difference is the read, which builds the context object on first use (an
  \`AbortController\` and its \`close\` listener, \`AbortSignal.any\` with the App's deadline, a child logger).
- **In-process**: in the orchestrating process (unpinned), 7 alternating batches of 1,000,000 calls of a
  one-line function, directly, through \`als.run(store, fn, i)\`, and through \`run\` with \`getStore()\` in \`fn\`;
  ns per call, medians (min–max): call ${fixed(median(micro.call), 1)} ns (${range(micro.call)}), run ${fixed(median(micro.run), 1)} ns
  (${range(micro.run)}), run + getStore ${fixed(median(micro.runRead), 1)} ns (${range(micro.runRead)}).
- **Load**: three server processes (\`WEB_KIT_SERVE=csrf|http|app node --conditions=source bench/web-kit-cost.ts\`),
  the two or three sides of each comparison in the same one, so that a process's luck in heap layout and JIT
  decisions does not pass for a difference (the idle side's timers run during the other's runs, alike for both);
  ${pin ? 'pinned to core 0, wrk (1 thread) to core 1' : 'unpinned (fewer than 2 cores)'}, ${CONNECTIONS} keep-alive connections. A warm-up run
  of ${WARMUP_S} s per case, then ${ROUNDS} rounds of ${DURATION_S} s; in a round the cases of each comparison run back to back,
  their order turned by one every round (and the order of the comparisons too).
- **CPU µs/req**: utime + stime of the server process (all its threads) from \`/proc/<pid>/stat\` (ticks of
  ${1000 / CLK_TCK} ms) over the run ÷ the requests wrk completed. Medians; min–max over the rounds used; **CPU spread**:
  (max − min) ÷ median. The **ratios** (a ÷ b) and **added** (a − b) are taken round by round, between runs seconds
  apart, then their median; "rounds above 1" counts the rounds where a took more CPU per request than b.
- **noise %**: CPU of every other process (and steal) on the machine during the run, in % of one core (the highest
  among the rounds used); a run above ${NOISY_PCT} % was measured again once (until ${RETRY_UNTIL_S} s into the run), the
  quieter kept; rounds above it are left out of medians and ratios when 3 quiet ones remain (rounds column:
  used/measured). The host is a shared VM: slow spells that show no steal appear only as spread, hence the min–max.

## Figures

${sections.join('\n')}
## Side by side (round by round, median)

${RATIO_HEAD}
${ratioRow(csrfB, 'CSRF on ÷ off, current browser')}
${ratioRow(csrfO, 'CSRF on ÷ off, Origin only')}
${ratioRow(csrfN, 'CSRF on ÷ off, no browser headers')}
${ratioRow(alsRun, '`node:http`: run ÷ plain')}
${ratioRow(alsRead, '`node:http`: run + getStore ÷ plain')}
${ratioRow(cmp('als', 'read', 'run'), '`node:http`: run + getStore ÷ run')}
${ratioRow(appRead, 'App: currentContext() ÷ no read')}

## Reading

${reading}
`;
  writeFileSync(`${out}.md`, md);
  if (saved === undefined) {
    const cases = CASES.map(({ key, title, server, path }) => ({ key, title, server, path }));
    writeFileSync(`${out}.json`, `${JSON.stringify({ meta, cases, inProcessNs: micro, comparisons, samples }, null, 2)}\n`);
  }
  process.stdout.write(md);
}
