/**
 * The payload of a `flotilla:metrics` snapshot (see `protocol.ts`, which
 * checks every message with these guards): a worker's metrics as metric
 * families, and the check that nothing in them can break the primary's
 * aggregation or the exposition's syntax. Guards never throw.
 */

import { isRecord } from '../utils/is-record.ts';

/** How NaN and the infinities travel: JSON has no such numbers. */
export type NonFiniteValue = 'NaN' | '+Inf' | '-Inf';

/**
 * One metric family as a worker sends it (`toMetricFamilies` makes them): an
 * entry of prom-client's `getMetricsAsJSON()` whose labels are already written
 * as the exposition writes them (same order, same escaping), so that the
 * primary matches strings and adds numbers, never formats a label.
 *
 * Samples come one of two ways. Without `buckets`, one `series` entry per
 * sample: `name{label="value",…}`. With `buckets` (histograms, as
 * Prometheus's own protobuf format carries them), one `series` entry per
 * label set, `label="value",…` without braces (or `''`), and
 * `buckets.length + 2` values each: the cumulative bucket counts, the sum, the
 * count.
 */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  /** How the primary combines the processes' values of one sample (prom-client's aggregators). */
  aggregator: 'sum' | 'first' | 'min' | 'max' | 'average' | 'omit';
  series: string[];
  values: (number | NonFiniteValue)[];
  /**
   * Only when some label set is not in canonical order (`le` first, the
   * others by name): every `series` entry with its labels in that order.
   * Samples of different processes are matched on it (else on `series`),
   * as prom-client matches label sets whatever their order.
   */
  keys?: string[];
  /** A histogram's upper bounds as its `le` labels write them, `+Inf` last. */
  buckets?: string[];
}

/** prom-client's aggregators: a metric naming another one would fail the whole scrape. */
const AGGREGATORS = new Set(['sum', 'first', 'min', 'max', 'average', 'omit']);
const METRIC_TYPES = new Set(['counter', 'gauge', 'histogram', 'summary']);
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const NON_FINITE = new Set<unknown>(['NaN', '+Inf', '-Inf'] satisfies NonFiniteValue[]);
const FAMILY_FIELDS = new Set(['name', 'help', 'type', 'aggregator', 'series', 'values', 'keys', 'buckets']);
const SAMPLE_NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\\n]|\\[\\"n])*"/y;
const LABEL_VALUE = /^(?:[^"\\\n]|\\[\\"n])*$/;

/** A {@link MetricFamily}, checked as far as the primary's aggregation and exposition rely on it. */
export function isMetricFamily(m: unknown): m is MetricFamily {
  if (!isRecord(m) || !Object.keys(m).every((key) => FAMILY_FIELDS.has(key))) return false;
  const { name, help, type, aggregator, series, values, keys, buckets } = m;
  if (typeof name !== 'string' || !METRIC_NAME.test(name) || typeof help !== 'string') return false;
  if (!METRIC_TYPES.has(type as string) || !AGGREGATORS.has(aggregator as string)) return false;
  if (!Array.isArray(series) || !Array.isArray(values) || !values.every((v) => typeof v === 'number' || NON_FINITE.has(v))) return false;
  if (keys !== undefined && !(Array.isArray(keys) && keys.length === series.length && keys.every(isString))) return false;
  if (buckets === undefined) return values.length === series.length && series.every(isSample);
  return (
    type === 'histogram' &&
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every((b) => typeof b === 'string' && LABEL_VALUE.test(b)) &&
    values.length === series.length * (buckets.length + 2) &&
    series.every((s) => typeof s === 'string' && isLabelList(s, 0, s.length, 'le'))
  );
}

const isString = (x: unknown) => typeof x === 'string';

/** `name` or `name{label="value",…}`: nothing a worker sends can break the exposition's syntax. */
function isSample(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  SAMPLE_NAME.lastIndex = 0;
  if (!SAMPLE_NAME.test(text)) return false;
  const at = SAMPLE_NAME.lastIndex;
  if (at === text.length) return true;
  return text[at] === '{' && text.endsWith('}') && at + 2 < text.length && isLabelList(text, at + 1, text.length - 1);
}

/** `a="1",b="2"` between `start` and `end`: escaped values, no label twice (nor `reserved`, which its family adds). */
function isLabelList(text: string, start: number, end: number, reserved?: string): boolean {
  const names: string[] = [];
  let at = start;
  while (at < end) {
    if (names.length > 0 && text[at++] !== ',') return false;
    LABEL.lastIndex = at;
    const label = LABEL.exec(text);
    const labelName = label?.[1];
    if (labelName === undefined || labelName === reserved || names.includes(labelName)) return false;
    names.push(labelName);
    at = LABEL.lastIndex;
  }
  return at === end;
}
