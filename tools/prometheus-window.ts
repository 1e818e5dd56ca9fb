import type { MatrixSeries, Prometheus } from './prometheus.ts';

/**
 * An exact window over a counter in a real Prometheus, to compare what it makes of the counter with what the
 * clients were answered (`test/integration/prometheus-truth.test.ts`, `reliability/scenarios/prometheus-truth.ts`).
 *
 * Why the window is exact. `increase()` over [T - w, T] takes the last sample minus the first one inside the
 * range (plus each value a reset starts from), then extrapolates towards the range's edges by the gap between
 * the edge and the nearest sample. The window ends at T = the timestamp of a scrape ~3 intervals after the
 * load ({@link windowEnd}: no gap, and by then every answer has reached the sum) and starts 1 ms before the
 * first scrape that saw exactly the warm-up count, taken before any load request was sent ({@link windowStart};
 * the scrape before it falls outside): so it extrapolates by 1 ms out of the whole window, and counts every load
 * answer, none of the warm-up. The same two samples give the raw difference `value(T) - value(T0)`, which a
 * reset would make smaller where `increase()` makes it larger. The series has to exist before the window
 * starts (hence a warm-up): a counter that first appears inside it has no earlier sample to start from.
 */

/** A sample or a point: ms since the epoch, and its value. */
export interface Point {
  at: number;
  value: number;
}

/** What Prometheus makes of the counter over the window (undefined: the query yielded no series). */
export interface CounterWindow {
  windowMs: number;
  /** Scrapes in the window (`count_over_time(up)`). */
  scrapes: number | undefined;
  /** `sum(increase(series))` over the window. */
  increase: number | undefined;
  /** `sum(series)` at the last scrape minus at the first: what a reset would make smaller. */
  rawDelta: number | undefined;
  /** `sum(resets(route))` over the window. */
  resets: number | undefined;
  minUp: number | undefined;
  maxStale: number | undefined;
  maxMissing: number | undefined;
  /** The highest point of `sum(rate(route[5s]))`, one a second from 5 s into the window to its end. */
  peakRate: Point;
}

/** The first scrape of the window: the latest of 3 in a row whose sum of `series` is exactly `warm`. */
export function windowStart(prometheus: Prometheus, series: string, warm: number): Promise<Point> {
  return waitForSample(prometheus, series, (at, value) => value === warm && at > 0, 3, 'Prometheus to scrape the warm-up count');
}

/** The last scrape of the window: waits 3.5 s after the load's end (`loadEnd`, ms since the epoch), then for a scrape ≥ 2.5 s after it. */
export async function windowEnd(prometheus: Prometheus, series: string, loadEnd: number): Promise<Point> {
  await new Promise((r) => setTimeout(r, 3_500));
  return waitForSample(prometheus, series, (at) => at >= loadEnd + 2_500, 1, 'a scrape ~3 intervals after the load');
}

/**
 * Queries the window from `start` to `end` (from {@link windowStart} and {@link windowEnd}): `series` is the
 * counted one (e.g. `http_requests_total{route="/who",status="200"}`), `route` all of its route's series
 * (e.g. `http_requests_total{route="/who"}`) for `resets()` and `rate()`.
 */
export async function counterWindow(
  prometheus: Prometheus,
  series: string,
  route: string,
  start: Point,
  end: Point,
): Promise<CounterWindow> {
  const windowMs = end.at - start.at + 1;
  const range = `[${windowMs}ms]`;
  const increase = await prometheus.scalar(`sum(increase(${series}${range}))`, end.at);
  const atEnd = await prometheus.scalar(`sum(${series})`, end.at);
  const atStart = await prometheus.scalar(`sum(${series})`, start.at);
  const resets = await prometheus.scalar(`sum(resets(${route}${range}))`, end.at);
  const minUp = await prometheus.scalar(`min_over_time(up${range})`, end.at);
  const scrapes = await prometheus.scalar(`count_over_time(up${range})`, end.at);
  const maxStale = await prometheus.scalar(`max_over_time(flotilla_scrape_workers_stale${range})`, end.at);
  const maxMissing = await prometheus.scalar(`max_over_time(flotilla_scrape_workers_missing${range})`, end.at);
  const rates = await prometheus.queryRange(`sum(rate(${route}[5s]))`, start.at + 5_000, end.at, 1);
  return {
    windowMs,
    scrapes,
    increase,
    rawDelta: atEnd !== undefined && atStart !== undefined ? atEnd - atStart : undefined,
    resets,
    minUp,
    maxStale,
    maxMissing,
    peakRate: maxPoint(rates),
  };
}

/**
 * The latest scrape of `series` (summed over its series, per scrape timestamp) that satisfies `accept`, once
 * the last `count` scrapes exist and all satisfy it; polls for up to 20 s.
 */
async function waitForSample(
  prometheus: Prometheus,
  series: string,
  accept: (at: number, value: number) => boolean,
  count: number,
  what: string,
): Promise<Point> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const points = sumByTimestamp(await prometheus.samples(`${series}[15s]`));
    const last = points.slice(-count);
    const found = last.at(-1);
    if (found !== undefined && last.length === count && last.every((p) => accept(p.at, p.value))) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last samples: ${JSON.stringify(points.slice(-5))}${prometheus.tail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Raw samples of several series (from one target, so sharing scrape timestamps) → one sum per timestamp, in order; ms. */
function sumByTimestamp(series: MatrixSeries[]): Point[] {
  const sums = new Map<number, number>();
  for (const s of series)
    for (const [at, value] of s.values) sums.set(Math.round(at * 1000), (sums.get(Math.round(at * 1000)) ?? 0) + Number(value));
  return [...sums].sort(([a], [b]) => a - b).map(([at, value]) => ({ at, value }));
}

function maxPoint(series: MatrixSeries[]): Point {
  let peak = { at: 0, value: Number.NEGATIVE_INFINITY };
  for (const s of series)
    for (const [at, value] of s.values) if (Number(value) > peak.value) peak = { at: Math.round(at * 1000), value: Number(value) };
  return peak;
}
