/** The encodings flotilla compresses with (`compression.encodings`). */
export type Encoding = 'zstd' | 'br' | 'gzip';

/** A q-value: 0, 1, or 0.x with up to three decimals (RFC 9110 §12.4.2). */
const QVALUE = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

/**
 * The codings `*` stands for, most widely decodable first: a client that accepts "any coding"
 * (Prism's proxy, node-fetch, many HTTP libraries' default) decodes gzip for sure, Brotli often,
 * zstd rarely yet; zstd is chosen only for a client that names it.
 */
const WILDCARD: readonly Encoding[] = ['gzip', 'br'];

/**
 * The encoding of a reply, negotiated from the request's `Accept-Encoding`
 * (RFC 9110 §12.5.3) among `offered` (the server's order of preference):
 * the coding with the highest q-value, the server's order breaking ties;
 * `*` stands for the codings the header does not name, gzip first, then
 * Brotli, never zstd (which a client gets only by naming it), and a coding the
 * header names wins a tie with one `*` stands for; `x-gzip` is `gzip`;
 * unknown codings and malformed entries are ignored. `identity` (no
 * compression) when the header is absent or empty, when nothing offered is
 * acceptable, or when the client weighs `identity` above the best coding (an
 * `identity` the header does not name weighs as its lowest entry); a
 * client that refuses identity too (`identity;q=0`) and accepts nothing
 * offered gets it anyway, as it would from most servers (a 406 would be
 * allowed, and helps nobody).
 *
 * @example
 * negotiateEncoding('gzip, deflate, br, zstd', ['zstd', 'br', 'gzip']); // 'zstd'
 * negotiateEncoding('*', ['zstd', 'br', 'gzip']);                         // 'gzip'
 * negotiateEncoding('br;q=0.5, gzip', ['zstd', 'br', 'gzip']);           // 'gzip'
 * negotiateEncoding('*;q=0.1, identity;q=0', ['br']);                      // 'br'
 * negotiateEncoding('gzip;q=0.4, identity', ['gzip']);                     // 'identity'
 */
export function negotiateEncoding(header: string | undefined, offered: readonly Encoding[]): Encoding | 'identity' {
  if (header === undefined || header === '') return 'identity';
  const weights = new Map<string, number>();
  for (const entry of header.split(',')) {
    const [rawName = '', ...params] = entry.split(';');
    let name = rawName.trim().toLowerCase();
    if (name === '') continue;
    if (name === 'x-gzip') name = 'gzip';
    let q = 1;
    let malformed = false;
    for (const param of params) {
      const p = param.trim();
      if (p === '') continue;
      const match = QVALUE.exec(p);
      if (match === null) {
        // an unknown parameter makes the entry unusable; a repeated name keeps its first weight
        malformed = true;
        break;
      }
      q = Number(match[1]);
    }
    if (!malformed && !weights.has(name)) weights.set(name, q);
  }
  let best: Encoding | undefined;
  let bestQ = 0;
  // the codings named, in the server's order, then those `*` stands for, in its order: the first of the highest weight wins
  for (const encoding of offered) {
    const q = weights.get(encoding) ?? 0;
    if (q > bestQ) {
      best = encoding;
      bestQ = q;
    }
  }
  const any = weights.get('*');
  if (any !== undefined) {
    for (const encoding of WILDCARD) {
      if (offered.includes(encoding) && !weights.has(encoding) && any > bestQ) {
        best = encoding;
        bestQ = any;
      }
    }
  }
  if (best === undefined) return 'identity';
  // identity unnamed (and no `*`): as the least of the weights given, as `negotiator` (Express) reads it, so
  // that `br;q=0.7, gzip;q=0.6` is a preference among codings, not a refusal of them
  const identityQ = weights.get('identity') ?? any ?? Math.min(...weights.values());
  return identityQ > bestQ ? 'identity' : best;
}
