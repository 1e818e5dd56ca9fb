import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { MetricFamily, NonFiniteValue } from '../ipc/protocol.ts';

/** An entry of prom-client's `getMetricsAsJSON()`. */
export type MetricJson = MetricObjectWithValues<MetricValue<string>>;
type Sample = { value: unknown; labels?: Record<string, unknown>; metricName?: string };
type Head = Pick<MetricFamily, 'name' | 'help' | 'type' | 'aggregator'>;

/**
 * A registry's metrics as a worker sends them to the primary: labels written
 * here, once, as prom-client's exposition writes them (same order, same
 * escaping), and each histogram label set once rather than once per bucket
 * (see {@link MetricFamily}). With `histograms: false` every family is sent
 * sample by sample.
 *
 * @example
 * process.send?.(msg.metrics(toMetricFamilies(await registry.getMetricsAsJSON())));
 */
export function toMetricFamilies(metrics: readonly MetricJson[], options: { histograms?: boolean } = {}): MetricFamily[] {
  const histograms = options.histograms ?? true;
  return metrics.map((metric) => {
    const head: Head = {
      name: metric.name,
      help: metric.help,
      type: metric.type as unknown as MetricFamily['type'],
      aggregator: metric.aggregator as MetricFamily['aggregator'],
    };
    const samples = (metric.values ?? []) as Sample[];
    return (histograms && head.type === 'histogram' && histogramFamily(head, samples)) || sampleFamily(head, samples);
  });
}

/** One `series` entry per sample; `keys` when some label set is out of canonical order. */
function sampleFamily(head: Head, samples: readonly Sample[]): MetricFamily {
  const name = escapeText(head.name);
  const series = new Array<string>(samples.length);
  const values = new Array<number | NonFiniteValue>(samples.length);
  let keys: string[] | undefined;
  for (let i = 0; i < samples.length; i++) {
    const sample = samples[i] as Sample;
    const sampleName = sample.metricName === undefined ? name : sample.metricName;
    const labels = sample.labels ?? {};
    const names = Object.keys(labels);
    const text = withName(sampleName, labelText(labels, names));
    series[i] = text;
    values[i] = wireValue(sample.value);
    const canonical = isCanonical(names);
    if (!canonical) keys ??= series.slice(0, i);
    if (keys !== undefined) keys[i] = canonical ? text : withName(sampleName, labelText(labels, canonicalOrder(names)));
  }
  return keys === undefined ? { ...head, series, values } : { ...head, series, values, keys };
}

/**
 * prom-client's histogram samples (per label set: one `_bucket` per bound with
 * `le` first, then `_sum` and `_count`), one label set at a time; undefined
 * when the samples are not exactly that, so that they go sample by sample.
 */
function histogramFamily(head: Head, samples: readonly Sample[]): MetricFamily | undefined {
  if (escapeText(head.name) !== head.name) return undefined;
  const bucketName = `${head.name}_bucket`;
  let bounds = 0;
  while (bounds < samples.length && samples[bounds]?.metricName === bucketName) bounds++;
  const size = bounds + 2;
  if (bounds === 0 || samples.length % size !== 0) return undefined;
  const upper = samples.slice(0, bounds).map((s) => s.labels?.['le']);
  const buckets = upper.map(escapeLabelValue);
  if (upper.includes(undefined) || new Set(buckets).size < buckets.length) return undefined;
  const series: string[] = [];
  const values: (number | NonFiniteValue)[] = [];
  const keys: string[] = [];
  let canonical = true;
  for (let at = 0; at < samples.length; at += size) {
    const sum = samples[at + bounds] as Sample;
    const count = samples[at + bounds + 1] as Sample;
    const labels = sum.labels ?? {};
    const names = Object.keys(labels);
    const regular =
      sum.metricName === `${head.name}_sum` &&
      count.metricName === `${head.name}_count` &&
      !names.includes('le') &&
      names.every((n) => labels[n] !== undefined) &&
      sameLabels(count.labels, labels, names, false);
    if (!regular) return undefined;
    for (let i = 0; i < bounds; i++) {
      const bucket = samples[at + i] as Sample;
      if (bucket.metricName !== bucketName || bucket.labels?.['le'] !== upper[i] || !sameLabels(bucket.labels, labels, names, true)) {
        return undefined;
      }
      values.push(wireValue(bucket.value));
    }
    values.push(wireValue(sum.value), wireValue(count.value));
    const text = labelText(labels, names);
    series.push(text);
    const inOrder = isCanonical(names);
    canonical &&= inOrder;
    keys.push(inOrder ? text : labelText(labels, canonicalOrder(names)));
  }
  return canonical ? { ...head, series, values, buckets } : { ...head, series, values, keys, buckets };
}

/** `labels` has exactly `names` (after `le` when `le`), in that order, with the values of `reference`. */
function sameLabels(
  labels: Record<string, unknown> | undefined,
  reference: Record<string, unknown>,
  names: string[],
  le: boolean,
): boolean {
  if (labels === undefined) return names.length === 0 && !le;
  let i = le ? -1 : 0;
  for (const key in labels) {
    if (i === -1 ? key !== 'le' : key !== names[i] || labels[key] !== reference[key]) return false;
    i++;
  }
  return i === names.length;
}

/** `a="1",b="2"`; labels whose value is undefined are left out, as JSON leaves them out. */
function labelText(labels: Record<string, unknown>, names: readonly string[]): string {
  let text = '';
  for (const key of names) {
    const value = labels[key];
    if (value === undefined) continue;
    text += `${text === '' ? '' : ','}${key}="${escapeLabelValue(value)}"`;
  }
  return text;
}

function withName(name: string, labels: string): string {
  return labels === '' ? name : `${name}{${labels}}`;
}

/** The order samples are matched on: `le` first, the other labels by name. */
function canonicalOrder(names: readonly string[]): string[] {
  const sorted = names.filter((n) => n !== 'le').sort();
  return sorted.length === names.length ? sorted : ['le', ...sorted];
}

function isCanonical(names: readonly string[]): boolean {
  let previous = '';
  for (const [i, name] of names.entries()) {
    if (name === 'le' ? i > 0 : name < previous) return false;
    if (name !== 'le') previous = name;
  }
  return true;
}

function wireValue(value: unknown): number | NonFiniteValue {
  const n = typeof value === 'number' ? value : Number(value);
  if (Number.isFinite(n)) return n;
  return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}

const TEXT_SPECIAL = /[\\\n]/;
const LABEL_SPECIAL = /[\\\n"]/;

/** prom-client's escaping of names and HELP text: backslash and line feed. */
export function escapeText(text: string): string {
  return TEXT_SPECIAL.test(text) ? text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') : text;
}

/** prom-client's escaping of a label value: backslash, line feed and double quote. */
function escapeLabelValue(value: unknown): string {
  const text = typeof value === 'string' ? value : `${value}`;
  return LABEL_SPECIAL.test(text) ? text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : text;
}
