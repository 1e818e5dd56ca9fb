import { isIP } from 'node:net';

/** A DNS name as a `Host` carries it: labels of letters, digits, `-` and `_`, an optional final dot. */
const HOST_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?$/;
/** A port as written after a host or an address: 1 to 5 digits (the value is checked apart). */
const PORT = /^[0-9]{1,5}$/;
/** An obfuscated port of a `Forwarded` node (RFC 7239 section 6.3): `_` and letters, digits, `.`, `_`, `-`. */
const OBFUSCATED_PORT = /^_[A-Za-z0-9._-]+$/;
/** Nothing longer is an address, with its brackets and port, or a host name with its port. */
const MAX_ADDRESS = 64;
const MAX_HOST = 261;

/**
 * The IP address of one `X-Forwarded-For` entry, or undefined when it is not one: a bare IPv4 or
 * IPv6 address, an IPv6 address in brackets, either with a port (`192.0.2.60:4711`,
 * `[2001:db8::1]:4711`, as some load balancers write it). IPv4 mapped in IPv6 reads as IPv4; a
 * zone (`fe80::1%eth0`) is no client address.
 *
 * @example
 * forwardedForEntry(' [2001:db8::1]:4711 '); // '2001:db8::1'
 * forwardedForEntry('not-an-ip<script>'); // undefined
 */
export function forwardedForEntry(entry: string): string | undefined {
  const text = entry.trim();
  if (text.length === 0 || text.length > MAX_ADDRESS) return undefined;
  if (isIP(text) !== 0) return plainAddress(text);
  return addressWithPort(text, false);
}

/**
 * The IP address of a `Forwarded` node (the `for=` value, unquoted), or undefined when it names none:
 * an IPv4 address, an IPv6 address in brackets, either with a port or an obfuscated port
 * (`192.0.2.43:47011`, `[2001:db8:cafe::17]:_p1`). `unknown` and obfuscated identifiers (`_hidden`)
 * name no address; an IPv6 address outside brackets is not a node (RFC 7239 section 6).
 *
 * @example
 * forwardedNode('[2001:db8:cafe::17]:4711'); // '2001:db8:cafe::17'
 * forwardedNode('unknown'); // undefined
 */
export function forwardedNode(node: string): string | undefined {
  if (node.length === 0 || node.length > MAX_ADDRESS) return undefined;
  if (isIP(node) === 4) return node;
  return addressWithPort(node, true);
}

/**
 * A forwarded protocol, lower-cased, when it is `http` or `https` (in any case); else undefined.
 *
 * @example
 * forwardedProtocol(' HTTPS '); // 'https'
 * forwardedProtocol('javascript'); // undefined
 */
export function forwardedProtocol(value: string | undefined): 'http' | 'https' | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().toLowerCase();
  return text === 'http' || text === 'https' ? text : undefined;
}

/**
 * A forwarded host when it is a valid `host[:port]` (RFC 9110 `Host`): a DNS name or an IPv4
 * address, or an IPv6 address in brackets, with an optional port from 1 to 65535; else undefined.
 *
 * @example
 * forwardedHost('shop.example:8443'); // 'shop.example:8443'
 * forwardedHost('evil.example/<script>'); // undefined
 */
export function forwardedHost(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.length === 0 || text.length > MAX_HOST) return undefined;
  let name = text;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1 || isIP(text.slice(1, close)) !== 6 || text.includes('%')) return undefined;
    const rest = text.slice(close + 1);
    return rest === '' || (rest.startsWith(':') && validPort(rest.slice(1))) ? text : undefined;
  }
  const colon = text.lastIndexOf(':');
  if (colon !== -1) {
    if (!validPort(text.slice(colon + 1))) return undefined;
    name = text.slice(0, colon);
  }
  return name.length <= 253 && HOST_NAME.test(name) ? text : undefined;
}

/** `[v6]`, `[v6]:port` and `v4:port`; with `obfuscated`, the port may be an obfuscated one. */
function addressWithPort(text: string, obfuscated: boolean): string | undefined {
  let address: string;
  let port: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) return undefined;
    address = text.slice(1, close);
    if (isIP(address) !== 6) return undefined;
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return undefined;
      port = rest.slice(1);
    }
  } else {
    const colon = text.indexOf(':');
    if (colon === -1) return undefined;
    address = text.slice(0, colon);
    if (isIP(address) !== 4) return undefined;
    port = text.slice(colon + 1);
  }
  if (port !== undefined && !validPort(port) && !(obfuscated && OBFUSCATED_PORT.test(port))) return undefined;
  return plainAddress(address);
}

/** A valid address as flotilla reports it: IPv4 mapped in IPv6 as IPv4; undefined for one with a zone. */
function plainAddress(address: string): string | undefined {
  if (address.includes('%')) return undefined;
  return unmapped(address);
}

function validPort(text: string): boolean {
  if (!PORT.test(text)) return false;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/**
 * `::ffff:10.1.2.3` → `10.1.2.3`: an IPv4 client on a dual-stack socket, or in a header.
 *
 * @example
 * unmapped('::ffff:10.1.2.3'); // '10.1.2.3'
 */
export function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
