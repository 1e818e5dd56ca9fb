import type { Encoding } from '../compression/negotiate.ts';
import { negotiateEncoding } from '../compression/negotiate.ts';

/** The file-name suffix of each precompressed sibling. */
export const SIBLING_SUFFIX: Readonly<Record<Encoding, string>> = Object.freeze({ br: '.br', zstd: '.zst', gzip: '.gz' });

/**
 * The precompressed siblings worth looking for, best first: the encodings of `offered` that the
 * request's `Accept-Encoding` takes, in the order `negotiateEncoding` would choose them (the
 * highest q-value, `offered`'s order breaking ties), stopping where the client would rather have
 * the file as it is. Empty without the header. A request for a compressed file itself
 * (`app.js.gz`) gets it as it is: no sibling of a sibling.
 *
 * @example
 * siblingsFor('gzip, br', ['br', 'zstd', 'gzip'], 'app.js');  // ['br', 'gzip']
 * siblingsFor('gzip;q=0.5, br;q=0', ['br', 'gzip'], 'app.js'); // ['gzip']
 * siblingsFor(undefined, ['br'], 'app.js');                    // []
 */
export function siblingsFor(header: string | undefined, offered: readonly Encoding[], path: string): Encoding[] {
  if (header === undefined || header === '' || offered.length === 0) return [];
  for (const suffix of Object.values(SIBLING_SUFFIX)) if (path.endsWith(suffix)) return [];
  const order: Encoding[] = [];
  let left = [...offered];
  while (left.length > 0) {
    const best = negotiateEncoding(header, left);
    if (best === 'identity') break;
    order.push(best);
    left = left.filter((e) => e !== best);
  }
  return order;
}
