/**
 * The network of a client address, as a rate limit counts it: an IPv6 address becomes the
 * canonical text of its first `ipv6Bits` bits (RFC 5952: lowercase, no leading zeros, the longest
 * run of zero groups as `::`) followed by `/bits`, so that every way of writing one network, in
 * every worker and replica, names one bucket; an IPv4 address (and an IPv4 address mapped in IPv6,
 * `::ffff:1.2.3.4`) stays the whole address; a zone id (`%eth0`) is dropped. Anything that is not
 * an IPv6 address is returned as given. Parsed by hand, one pass over the characters: it runs for
 * every limited request.
 *
 * @example
 * ipPrefix('2001:db8:1:ff42::7', 56); // '2001:db8:1:ff00::/56'
 * ipPrefix('::ffff:192.0.2.1', 56);   // '192.0.2.1'
 * ipPrefix('192.0.2.1', 56);          // '192.0.2.1'
 */
export function ipPrefix(address: string, ipv6Bits: number): string {
  if (!address.includes(':')) return address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  if (isMappedIPv4(groups)) {
    const [high = 0, low = 0] = [groups[6], groups[7]];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  const bits = Math.min(128, Math.max(0, Math.trunc(ipv6Bits)));
  for (let g = 0; g < 8; g++) {
    const kept = bits - g * 16;
    if (kept <= 0) groups[g] = 0;
    else if (kept < 16) groups[g] = (groups[g] ?? 0) & (0xffff << (16 - kept)) & 0xffff;
  }
  return `${canonical(groups)}/${bits}`;
}

/** `::ffff:a.b.c.d`: 80 zero bits, then 16 one bits. */
function isMappedIPv4(groups: readonly number[]): boolean {
  return groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part and a zone id allowed), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  const zone = text.indexOf('%');
  const end = zone === -1 ? text.length : zone;
  if (end < 2) return undefined;
  const groups: number[] = [];
  /** Where `::` stands, counted in groups; -1: none. */
  let gap = -1;
  let i = 0;
  if (text.charCodeAt(0) === COLON) {
    if (text.charCodeAt(1) !== COLON) return undefined;
    gap = 0;
    i = 2;
  }
  while (i < end) {
    const start = i;
    let value = 0;
    for (let digit = hexDigit(text.charCodeAt(i)); digit !== -1 && i < end; digit = hexDigit(text.charCodeAt(i))) {
      value = value * 16 + digit;
      i++;
    }
    if (i < end && text.charCodeAt(i) === DOT) {
      // the last 32 bits written as an IPv4 address
      const v4 = ipv4Value(text, start, end);
      if (v4 === undefined || groups.length > 6) return undefined;
      groups.push(v4 >>> 16, v4 & 0xffff);
      i = end;
      break;
    }
    if (i === start || i - start > 4) return undefined;
    groups.push(value);
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON || i + 1 === end) return undefined;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (gap !== -1) return undefined;
      gap = groups.length;
      i++;
    }
  }
  if (gap === -1) return groups.length === 8 ? groups : undefined;
  if (groups.length > 7) return undefined;
  groups.splice(gap, 0, ...new Array<number>(8 - groups.length).fill(0));
  return groups;
}

/** The value of the dotted IPv4 address in `text` from `start` to `end` (four decimal parts, 0–255, no leading zero), or undefined. */
function ipv4Value(text: string, start: number, end: number): number | undefined {
  let value = 0;
  let parts = 0;
  let i = start;
  while (i < end) {
    const from = i;
    let part = 0;
    for (let c = text.charCodeAt(i); c >= ZERO && c <= NINE && i < end; c = text.charCodeAt(i)) {
      part = part * 10 + (c - ZERO);
      i++;
    }
    const digits = i - from;
    if (digits === 0 || digits > 3 || part > 255 || (digits > 1 && text.charCodeAt(from) === ZERO)) return undefined;
    value = value * 256 + part;
    parts++;
    if (i === end) break;
    if (text.charCodeAt(i) !== DOT || parts === 4) return undefined;
    i++;
    if (i === end) return undefined;
  }
  return parts === 4 ? value : undefined;
}

/** RFC 5952 text of eight groups: lowercase hex without leading zeros, the first longest run of two or more zero groups as `::`. */
function canonical(groups: readonly number[]): string {
  let bestAt = -1;
  let bestLength = 1;
  for (let g = 0; g < 8; ) {
    if (groups[g] !== 0) {
      g++;
      continue;
    }
    const at = g;
    while (g < 8 && groups[g] === 0) g++;
    if (g - at > bestLength) {
      bestAt = at;
      bestLength = g - at;
    }
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((group) => group.toString(16))
      .join(':');
  return bestAt === -1 ? hex(0, 8) : `${hex(0, bestAt)}::${hex(bestAt + bestLength, 8)}`;
}

const COLON = 0x3a;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** The value of a hex digit's character code, or -1. */
function hexDigit(code: number): number {
  if (code >= ZERO && code <= NINE) return code - ZERO;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}
