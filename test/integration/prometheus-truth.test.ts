import { type TestContext, test } from 'node:test';
import { Pool } from 'undici';
import { isAlive } from '../../tools/proc.ts';
import { type MatrixSeries, needPrometheus, type Prometheus, startPrometheus } from '../../tools/prometheus.ts';
import { get, startCluster } from '../helpers/cluster.ts';

/**
 * Issue 11: what a real Prometheus makes of the summed `http_requests_total`
 * while workers die (kill -9), are replaced (SIGHUP rolling restart) and are
 * too busy to answer (a 5 s synchronous block). The sum the primary serves
 * must behave as one counter: never go down (no reset seen by `resets()`),
 * so that `increase()` matches what the clients were answered and `rate()`
 * never overshoots; and every scrape must succeed (`up` stays 1).
 */

/** Offered load on `GET /pid`, requests per second, for `LOAD_MS`. */
const RATE = 200;
const LOAD_MS = 60_000;
/** Every n-th request goes on a new connection (node:cluster deals connections round-robin, so every worker serves). */
const FRESH_EVERY = 10;
/** Requests still unanswered beyond this are not sent (counted as skipped): the load stays bounded whatever happens. */
const MAX_IN_FLIGHT = 400;
/** When, from the start of the load, each disturbance begins. */
const KILL_AT_MS = 10_000;
const HUP_AT_MS = 25_000;
const BUSY_AT_MS = 40_000;
const BUSY_MS = 5_000;
/** Requests sent before Prometheus starts, so that the series exists (with this value) before the window. */
const WARM_UP = 20;
const SERIES = 'http_requests_total{route="/pid",status="200"}';

test('a real Prometheus sees one monotonic counter through kill -9, a rolling restart and a busy worker', {
  timeout: 180_000,
}, async (t: TestContext) => {
  if (!needPrometheus(t)) return;
  // Request logs off: ~12 000 lines the test has no use for.
  const cluster = startCluster(t, { config: { logging: { requests: false } } });
  const { appPort, metricsPort, workers } = await cluster.ready();
  const first = new Set(workers.values());

  // The series has to exist before the window starts: a counter that first appears inside the window has no
  // earlier sample for `increase()` to start from. So some requests first, on new connections (both workers).
  let warm = 0;
  for (let i = 0; i < WARM_UP; i++) if ((await get(appPort, '/pid')).status === 200) warm++;

  const prometheus = await startPrometheus(t, { target: `127.0.0.1:${metricsPort}` });
  if (prometheus === undefined) throw new Error('unreachable: needPrometheus said it is there');

  // The window starts at a scrape that saw exactly the warm-up count and was taken before the load began.
  const start = await waitForSample(prometheus, (at, value) => value === warm && at > 0, 3, 'Prometheus to scrape the warm-up count');
  if (start === undefined) throw new Error(`unreachable${prometheus.tail()}`);

  const pool = new Pool(`http://127.0.0.1:${appPort}`, { connections: 8, pipelining: 1 });
  t.after(() => pool.destroy());
  const load = new Load(pool, appPort);
  const events: string[] = [];
  const loadStart = Date.now();
  const note = (what: string) => events.push(`${((Date.now() - loadStart) / 1000).toFixed(1)} s ${what}`);
  const sleepUntil = (offsetMs: number) => new Promise((r) => setTimeout(r, Math.max(0, loadStart + offsetMs - Date.now())));

  const disturbances = async () => {
    await sleepUntil(KILL_AT_MS);
    const victim = workers.get(0);
    if (victim === undefined || !isAlive(victim)) throw new Error(`no live worker in slot 0 to kill${cluster.tail()}`);
    process.kill(victim, 'SIGKILL');
    note(`kill -9 worker ${victim}`);
    const replacement = await cluster.waitFor(
      (l) => l.msg === 'worker listening' && !first.has(l['workerPid'] as number),
      'the replacement of the killed worker',
      15_000,
    );
    note(`replacement ${replacement['workerPid']} listening`);

    await sleepUntil(HUP_AT_MS);
    cluster.signal('SIGHUP');
    note('SIGHUP');
    const restart = await cluster.waitFor(
      (l) => l.msg === 'rolling restart: done' || l.msg === 'rolling restart: stopped',
      'the end of the rolling restart',
      30_000,
    );
    if (restart.msg !== 'rolling restart: done') throw new Error(`the rolling restart stopped${cluster.tail()}`);
    note(`rolling restart done in ${restart['elapsedMs']} ms`);

    await sleepUntil(BUSY_AT_MS);
    note(`GET /busy?ms=${BUSY_MS}`);
    const busy = await get(appPort, `/busy?ms=${BUSY_MS}`, BUSY_MS + 15_000);
    if (busy.status !== 200) throw new Error(`GET /busy answered ${busy.status}: ${busy.body}`);
    note(`worker ${(JSON.parse(busy.body) as { pid: number }).pid} was busy for ${BUSY_MS} ms`);
  };
  try {
    await Promise.all([load.run(LOAD_MS), disturbances()]);
  } finally {
    load.stop();
    await load.settled();
  }
  note(`load over: ${load.ok} × 2xx`);

  // Let three more scrapes in, then end the window at the last one: by then every answer has reached the sum
  // (a worker's snapshot is at most ~1 s old), so the end value is final too.
  const loadEnd = Date.now();
  await new Promise((r) => setTimeout(r, 3_500));
  const end = await waitForSample(prometheus, (at) => at >= loadEnd + 2_500, 1, 'a scrape ~3 intervals after the load');
  if (end === undefined) throw new Error(`unreachable${prometheus.tail()}`);

  // Why this window is exact. `increase()` over [T - w, T] takes the last sample minus the first one inside
  // the range (plus each value a reset starts from), then extrapolates towards the range's edges by the gap
  // between the edge and the nearest sample. The window ends at T = the timestamp of the last scrape (no gap)
  // and starts 1 ms before the first scrape (the one that saw exactly `warm`, taken before any load request
  // was sent; the scrape before it falls outside): so it extrapolates by 1 ms out of ~65 s, and counts every
  // load answer, none of the warm-up. The same two samples give the raw difference `value(T) - value(T0)`,
  // which a reset would make smaller where `increase()` makes it larger. A client-counted 2xx the sum can
  // miss: a killed worker's last ~1 s not yet pushed, or an answer counted but cut by its death; hence 2 %.
  const windowMs = end.at - start.at + 1;
  const range = `[${windowMs}ms]`;
  const increase = await prometheus.scalar(`sum(increase(${SERIES}${range}))`, end.at);
  const atEnd = await prometheus.scalar(`sum(${SERIES})`, end.at);
  const atStart = await prometheus.scalar(`sum(${SERIES})`, start.at);
  const resets = await prometheus.scalar(`sum(resets(http_requests_total{route="/pid"}${range}))`, end.at);
  const minUp = await prometheus.scalar(`min_over_time(up${range})`, end.at);
  const scrapes = await prometheus.scalar(`count_over_time(up${range})`, end.at);
  const rates = await prometheus.queryRange('sum(rate(http_requests_total{route="/pid"}[5s]))', start.at + 5_000, end.at, 1);
  const peak = maxPoint(rates);
  const missing = await prometheus.scalar(`max_over_time(flotilla_scrape_workers_missing${range})`, end.at);

  const rawDelta = atEnd !== undefined && atStart !== undefined ? atEnd - atStart : undefined;
  t.diagnostic(`timeline: ${events.join('; ')}`);
  t.diagnostic(
    `client: ${load.sent} sent (${RATE}/s offered for ${LOAD_MS / 1000} s), ${load.ok} × 2xx, ${load.other} other statuses, ` +
      `${load.failed} failed${load.failed > 0 ? ` (${[...load.errors].map(([m, n]) => `${n} × ${m}`).join(', ')})` : ''}, ${load.skipped} skipped`,
  );
  t.diagnostic(
    `prometheus over ${(windowMs / 1000).toFixed(3)} s (${scrapes} scrapes): increase ${increase?.toFixed(1)} ` +
      `(${ratio(increase, load.ok)} of the client's 2xx), raw end - start ${rawDelta} (${ratio(rawDelta, load.ok)}), ` +
      `resets ${resets}, min up ${minUp}, max scrape_workers_missing ${missing}`,
  );
  t.diagnostic(
    `max sum(rate(http_requests_total{route="/pid"}[5s])) ${peak.value.toFixed(1)}/s ` +
      `(${(peak.value / RATE).toFixed(2)}× offered) at load + ${((peak.at - loadStart) / 1000).toFixed(0)} s`,
  );

  t.assert.ok(load.ok > RATE * (LOAD_MS / 1000) * 0.9, `the load ran: ${load.ok} × 2xx`);
  t.assert.strictEqual(resets, 0, 'Prometheus saw no counter reset: the sum never went down');
  t.assert.strictEqual(minUp, 1, 'every scrape of the window succeeded');
  t.assert.ok(increase !== undefined && Math.abs(increase - load.ok) <= 0.02 * load.ok, `increase() ${increase} within 2 % of ${load.ok}`);
  t.assert.ok(rawDelta !== undefined && Math.abs(rawDelta - load.ok) <= 0.02 * load.ok, `end - start ${rawDelta} within 2 % of ${load.ok}`);
  t.assert.ok(peak.value <= 1.5 * RATE, `rate()[5s] peaked at ${peak.value.toFixed(1)}/s, over 1.5 × the ${RATE}/s offered`);
});

/**
 * The latest scrape of `SERIES` (summed over its series, per scrape timestamp) that satisfies `accept`, once
 * the last `count` scrapes exist and all satisfy it; polls for up to 20 s.
 */
async function waitForSample(
  prometheus: Prometheus,
  accept: (at: number, value: number) => boolean,
  count: number,
  what: string,
): Promise<{ at: number; value: number } | undefined> {
  const until = Date.now() + 20_000;
  for (;;) {
    const points = sumByTimestamp(await prometheus.samples(`${SERIES}[15s]`));
    const last = points.slice(-count);
    if (last.length === count && last.every((p) => accept(p.at, p.value))) return last.at(-1);
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}; last samples: ${JSON.stringify(points.slice(-5))}${prometheus.tail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Raw samples of several series (from one target, so sharing scrape timestamps) → one sum per timestamp, in order; ms. */
function sumByTimestamp(series: MatrixSeries[]): { at: number; value: number }[] {
  const sums = new Map<number, number>();
  for (const s of series)
    for (const [at, value] of s.values) sums.set(Math.round(at * 1000), (sums.get(Math.round(at * 1000)) ?? 0) + Number(value));
  return [...sums].sort(([a], [b]) => a - b).map(([at, value]) => ({ at, value }));
}

function maxPoint(series: MatrixSeries[]): { at: number; value: number } {
  let peak = { at: 0, value: Number.NEGATIVE_INFINITY };
  for (const s of series)
    for (const [at, value] of s.values) if (Number(value) > peak.value) peak = { at: Math.round(at * 1000), value: Number(value) };
  return peak;
}

function ratio(measured: number | undefined, expected: number): string {
  return measured === undefined ? 'n/a' : `${((measured / expected) * 100).toFixed(2)} %`;
}

/**
 * An open-loop load: `RATE` requests a second whatever the answers take, on keep-alive connections of a
 * pool, every `FRESH_EVERY`-th on a new connection; counts what the client got.
 */
class Load {
  sent = 0;
  ok = 0;
  other = 0;
  failed = 0;
  skipped = 0;
  readonly errors = new Map<string, number>();
  readonly #pool: Pool;
  readonly #port: number;
  readonly #inFlight = new Set<Promise<void>>();
  #running = true;

  constructor(pool: Pool, port: number) {
    this.#pool = pool;
    this.#port = port;
  }

  async run(durationMs: number): Promise<void> {
    const started = performance.now();
    let issued = 0;
    for (;;) {
      const elapsed = performance.now() - started;
      if (!this.#running || elapsed >= durationMs) return;
      const due = Math.floor((elapsed / 1000) * RATE);
      for (; issued < due; issued++) {
        if (this.#inFlight.size >= MAX_IN_FLIGHT) this.skipped++;
        else this.#send(issued % FRESH_EVERY === 0);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  stop(): void {
    this.#running = false;
  }

  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  #send(fresh: boolean): void {
    this.sent++;
    const request = fresh ? this.#fresh() : this.#pooled();
    const done = request.then(
      (status) => {
        if (status >= 200 && status < 300) this.ok++;
        else this.other++;
      },
      (error: unknown) => {
        this.failed++;
        const message = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
        this.errors.set(message, (this.errors.get(message) ?? 0) + 1);
      },
    );
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }

  async #pooled(): Promise<number> {
    const res = await this.#pool.request({ method: 'GET', path: '/pid', headersTimeout: 20_000, bodyTimeout: 20_000 });
    await res.body.text();
    return res.statusCode;
  }

  async #fresh(): Promise<number> {
    return (await get(this.#port, '/pid', 20_000)).status;
  }
}
