import { TextDecoder } from 'node:util';
import { KError } from '../../errors/k-error.ts';

// One decoder for every request: fatal, so that invalid bytes throw instead of
// becoming U+FFFD; a byte order mark is kept (JSON and forms do not strip one).
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8 bytes in one pass, refusing what is not well-formed UTF-8
 * (RFC 3629): an overlong encoding, a lone continuation byte, a surrogate, a
 * code point past U+10FFFF or a sequence cut short is a 400 `INVALID_UTF8`
 * naming the offset of its first byte. A byte order mark is kept.
 *
 * @example
 * decodeUtf8(Buffer.from('héllo')); // 'héllo'
 * decodeUtf8(Buffer.from([0x61, 0xc0, 0xaf])); // throws INVALID_UTF8: 'the body is not valid UTF-8 (byte offset 1)'
 */
export function decodeUtf8(bytes: Uint8Array, what = 'the body'): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch (error) {
    throw invalidUtf8(bytes, what, error);
  }
}

/** The 400 of bytes that are not UTF-8, naming where the first ill-formed sequence starts. */
export function invalidUtf8(bytes: Uint8Array, what = 'the body', cause?: unknown): KError {
  const at = invalidUtf8Offset(bytes);
  const where = at === -1 ? '' : ` (byte offset ${at})`;
  return KError.of('INVALID_UTF8', `${what} is not valid UTF-8${where}`, cause === undefined ? {} : { cause });
}

/**
 * The offset of the first byte of the first ill-formed UTF-8 sequence in
 * `bytes`, or -1 when they are all well-formed: the byte ranges of the
 * Unicode Standard's table of well-formed sequences (Table 3-7). Linear, and
 * only run on bytes already refused, to tell where.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let length: number;
    // the range of the second byte; the others are 0x80..0xbf
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      else if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      else if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > n) return i;
    const second = bytes[i + 1] as number;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) {
      const c = bytes[i + k] as number;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += length;
  }
  return -1;
}
