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
  if (!address.includes(':') || !readIPv6(address)) return address;
  const groups = GROUPS;
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    // ::ffff:a.b.c.d: 80 zero bits, 16 one bits, then the IPv4 address
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  // out of 0–128: clamped; not a number: the address alone
  const bits = Number.isNaN(ipv6Bits) ? 128 : Math.min(128, Math.max(0, Math.trunc(ipv6Bits)));
  for (let g = 0; g < 8; g++) {
    const kept = bits - g * 16;
    if (kept <= 0) groups[g] = 0;
    else if (kept < 16) groups[g] = groups[g]! & (0xffff << (16 - kept));
  }
  return `${canonical(groups)}/${bits}`;
}

/** The groups of the address {@link readIPv6} read last: one buffer, since nothing awaits between reading and writing. */
const GROUPS = new Uint16Array(8);

/**
 * Reads an IPv6 address (a trailing dotted IPv4 part and a zone id allowed) into {@link GROUPS}:
 * false when it is none.
 */
function readIPv6(text: string): boolean {
  const zone = text.indexOf('%');
  const end = zone === -1 ? text.length : zone;
  if (end < 2) return false;
  const groups = GROUPS;
  let count = 0;
  /** Where `::` stands, counted in groups; -1: none. */
  let gap = -1;
  let i = 0;
  if (text.charCodeAt(0) === COLON) {
    if (text.charCodeAt(1) !== COLON) return false;
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
      if (v4 === -1 || count > 6) return false;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      break;
    }
    if (i === start || i - start > 4 || count === 8) return false;
    groups[count++] = value;
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON || i + 1 === end) return false;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (gap !== -1) return false;
      gap = count;
      i++;
    }
  }
  if (gap === -1) return count === 8;
  if (count > 7) return false;
  // the groups after `::` move to the end, zeros in their place
  const moved = count - gap;
  for (let k = 1; k <= moved; k++) groups[8 - k] = groups[count - k]!;
  for (let g = gap; g < 8 - moved; g++) groups[g] = 0;
  return true;
}

/** The value of the dotted IPv4 address in `text` from `start` to `end` (four decimal parts, 0–255, no leading zero), or -1. */
function ipv4Value(text: string, start: number, end: number): number {
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
    if (digits === 0 || digits > 3 || part > 255 || (digits > 1 && text.charCodeAt(from) === ZERO)) return -1;
    value = value * 256 + part;
    parts++;
    if (i === end) break;
    if (text.charCodeAt(i) !== DOT || parts === 4) return -1;
    i++;
    if (i === end) return -1;
  }
  return parts === 4 ? value : -1;
}

/** RFC 5952 text of eight groups: lowercase hex without leading zeros, the first longest run of two or more zero groups as `::`. */
function canonical(groups: Uint16Array): string {
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
  let text = '';
  for (let g = 0; g < 8; g++) {
    if (g === bestAt) {
      text += '::';
      g += bestLength - 1;
      continue;
    }
    if (g !== 0 && g !== bestAt + bestLength) text += ':';
    text += hex(groups[g]!);
  }
  return text;
}

const HEX = '0123456789abcdef';

/** A 16-bit group in lowercase hex without leading zeros (`Number#toString(16)` costs several times more). */
function hex(value: number): string {
  if (value < 0x10) return HEX[value]!;
  if (value < 0x100) return HEX[value >> 4]! + HEX[value & 15]!;
  if (value < 0x1000) return HEX[value >> 8]! + HEX[(value >> 4) & 15]! + HEX[value & 15]!;
  return HEX[value >> 12]! + HEX[(value >> 8) & 15]! + HEX[(value >> 4) & 15]! + HEX[value & 15]!;
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
