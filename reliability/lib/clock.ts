/** Milliseconds since the epoch with sub-millisecond precision, comparable with `Date.now()` and log timestamps. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Parses `30s`, `20m`, `1h`, `1500ms` or a bare number of seconds into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) throw new Error(`not a duration: '${text}' (examples: 30s, 30m, 1h)`);
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * factor;
}

/** `90000` → `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s === 0 ? `${m}m` : `${m}m${s}s`;
}

/** `promise`'s value, or undefined when it does not settle within `ms`; leaves no timer behind. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every `pollMs` until it returns a value, or undefined after `timeoutMs`. */
export async function until<T>(check: () => T | undefined, timeoutMs: number, pollMs = 5): Promise<T | undefined> {
  const deadline = now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (now() > deadline) return undefined;
    await sleep(pollMs);
  }
}
