/** Nearest-rank percentile (`p` in 0…100) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function max(values: readonly number[]): number {
  return values.reduce((m, v) => Math.max(m, v), Number.NEGATIVE_INFINITY);
}

export function min(values: readonly number[]): number {
  return values.reduce((m, v) => Math.min(m, v), Number.POSITIVE_INFINITY);
}

/** Least-squares slope of y over x; NaN with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** A number for a table: `digits` decimals, `n/a` when not finite. */
export function fmt(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}
