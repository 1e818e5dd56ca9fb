/**
 * The "did you mean" of an unknown key: the known key (of the same object of the schema) it most
 * likely misspells. A key is close when the edit distance, letter case aside, is at most a third of
 * its length, and never more than 2: `wokers` is `workers`, `prot` is `port` (two letters swapped
 * count as one edit), `colour` is not `cors`.
 */

/** The longest key compared: no key of a schema is longer, and the distance costs the product of the lengths. */
const MAX_KEY_LENGTH = 64;

/**
 * The known key closest to `key`, or undefined when none is close (see above); on a tie, the first
 * of `known`.
 *
 * @example
 * closestKey('wokers', ['port', 'workers', 'cluster']); // 'workers'
 * closestKey('colour', ['port', 'workers', 'cors']); // undefined
 */
export function closestKey(key: string, known: Iterable<string>): string | undefined {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return undefined;
  const limit = Math.min(2, Math.max(1, Math.floor(key.length / 3)));
  const typed = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    if (candidate === key || Math.abs(candidate.length - key.length) >= bestDistance) continue;
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The edit distance of two strings: insertions, deletions, substitutions and swaps of two
 * neighbouring characters, one each (the optimal string alignment distance).
 *
 * @example
 * editDistance('prot', 'port'); // 1
 */
export function editDistance(a: string, b: string): number {
  // three rows of the table: the one before the previous (for swaps), the previous, the current
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
