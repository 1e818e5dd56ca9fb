import { forwardedNode } from './forwarding-values.ts';

/** What one element of an RFC 7239 `Forwarded` header says about the hop it was written for. */
export interface ForwardedElement {
  /** The address of `for=`; undefined when the element has none or it is no IP address (`unknown`, `_hidden`, junk). */
  for: string | undefined;
  /** `proto=`, as written (not yet checked). */
  proto: string | undefined;
  /** `host=`, as written (not yet checked). */
  host: string | undefined;
}

/** The parameters RFC 7239 defines, each a bit, to note which an element gave (another parameter: 0). */
const PARAMETERS: Readonly<Record<string, number>> = { for: 1, by: 2, proto: 4, host: 8 };

/** A parameter name (an RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * One element of a `Forwarded` header (RFC 7239 section 4), `for=192.0.2.60;proto=https;host=shop.example`:
 * values are tokens or quoted strings. Undefined when the element is malformed: a pair without `=`, a
 * quote left open or inside a value, a backslash escape (no value of `for`, `proto` or `host` needs
 * one), or a parameter given twice. The header is cut into elements at every comma beforehand, so a
 * client's quote left open cannot swallow the element a proxy appended after it: it only spoils its
 * own.
 *
 * @example
 * parseForwardedElement('for="[2001:db8:cafe::17]:4711";proto=https');
 * // { for: '2001:db8:cafe::17', proto: 'https', host: undefined }
 */
export function parseForwardedElement(element: string): ForwardedElement | undefined {
  const parsed: ForwardedElement = { for: undefined, proto: undefined, host: undefined };
  let seen = 0;
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) {
      // `for=a;` and stray spaces leave an empty pair behind: harmless
      if (pair.trim() === '') continue;
      return undefined;
    }
    const key = pair.slice(0, eq).trim().toLowerCase();
    const value = unquoted(pair.slice(eq + 1).trim());
    if (!TOKEN.test(key) || value === undefined) return undefined;
    const bit = Object.hasOwn(PARAMETERS, key) ? (PARAMETERS[key] as number) : 0;
    if ((seen & bit) !== 0) return undefined;
    seen |= bit;
    if (key === 'for') parsed.for = forwardedNode(value);
    else if (key === 'proto') parsed.proto = value;
    else if (key === 'host') parsed.host = value;
  }
  return parsed;
}

/** A token as is, a quoted string without its quotes; undefined for an open quote, an inner quote or an escape. */
function unquoted(value: string): string | undefined {
  let inner = value;
  if (value.startsWith('"')) {
    if (value.length < 2 || !value.endsWith('"')) return undefined;
    inner = value.slice(1, -1);
  }
  return inner.includes('"') || inner.includes('\\') ? undefined : inner;
}
