import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** `trustProxy`: how many proxies stand in front (a hop count; 0: none), or the addresses and CIDRs of those trusted. */
export type TrustProxySetting = number | readonly string[];

/** Whether the hop at `index` (0: the socket's peer) with `address` is a proxy whose headers are believed. */
export type ProxyTrust = (address: string, index: number) => boolean;

/** The client as the request says it, once the trusted proxies' headers are read. */
export interface ClientOrigin {
  /** The client's address. */
  ip: string;
  /** `http` or `https`: the scheme the client used. */
  protocol: string;
  /** The `Host` the client asked for (with its port, if any). */
  host: string;
}

/**
 * Compiles `trustProxy`: `0` (the default) trusts no one, so the socket's peer is the client; a
 * hop count N trusts the N nearest proxies whoever they are (an ingress and a load balancer: 2);
 * a list trusts the peers whose address it holds (`10.0.0.0/8`, `::1`, `192.168.1.7`…), IPv4
 * addresses mapped in IPv6 (`::ffff:10.1.2.3`) read as IPv4.
 *
 * @example
 * const trust = compileTrust(['10.0.0.0/8']);
 * trust('10.1.2.3', 0); // true
 */
export function compileTrust(setting: TrustProxySetting): ProxyTrust | undefined {
  if (typeof setting === 'number') return setting > 0 ? (_address, index) => index < setting : undefined;
  if (setting.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of setting) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    const plain = unmapped(address);
    const type = isIP(plain);
    return type !== 0 && list.check(plain, type === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client of a request: the socket's peer, unless it is a trusted proxy; then, walking the
 * forwarding chain from the nearest hop back (`Forwarded`, RFC 7239, when present, else
 * `X-Forwarded-For`), the first address not trusted, or the farthest one. The scheme and host are
 * those recorded for that hop (`proto`/`host` of its `Forwarded` element; `X-Forwarded-Proto`/`-Host`
 * entries aligned with `-For`, or their last entry when they are not), falling back on the
 * socket's and the `Host` header. Headers from a peer that is not trusted are
 * ignored.
 *
 * @example
 * clientOf(req, compileTrust(1)); // { ip: '203.0.113.7', protocol: 'https', host: 'shop.example' }
 */
export function clientOf(req: IncomingMessage, trust: ProxyTrust | undefined): ClientOrigin {
  const peer = unmapped(req.socket?.remoteAddress ?? '');
  const own: ClientOrigin = {
    ip: peer,
    protocol: (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true ? 'https' : 'http',
    host: req.headers.host ?? '',
  };
  if (trust === undefined || !trust(peer, 0)) return own;
  const hops = forwardedHops(req);
  if (hops.length === 0) return own;
  // hops run from the client to the nearest proxy; the peer (index 0) forwarded the last one
  let at = hops.length - 1;
  for (let index = 1; at > 0 && trust(unmapped(hops[at]?.for ?? ''), index); index++) at--;
  const hop = hops[at] ?? {};
  return { ip: unmapped(hop.for ?? peer), protocol: hop.proto ?? own.protocol, host: hop.host ?? own.host };
}

interface Hop {
  for?: string;
  proto?: string;
  host?: string;
}

/** The forwarding chain, client first: the `Forwarded` elements, else `X-Forwarded-For` aligned with `-Proto` and `-Host`. */
function forwardedHops(req: IncomingMessage): Hop[] {
  const forwarded = joined(req.headers.forwarded);
  if (forwarded !== undefined) return forwarded.split(',').map(parseElement);
  const fors = list(req.headers['x-forwarded-for']);
  const protos = list(req.headers['x-forwarded-proto']);
  const hosts = list(req.headers['x-forwarded-host']);
  // a proxy that sets -Proto or -Host without -For: the one hop it describes is the client's
  const length = Math.max(fors.length, protos.length > 0 || hosts.length > 0 ? 1 : 0);
  const hops: Hop[] = [];
  for (let i = 0; i < length; i++) {
    const hop: Hop = {};
    const address = fors[i];
    // as long as -For, -Proto and -Host name the hop each entry was written for; otherwise (one value,
    // set by the edge proxy, as nginx and most ingresses do) the nearest entry stands for the client's
    const proto = protos.length === fors.length ? protos[i] : protos.at(-1);
    const host = hosts.length === fors.length ? hosts[i] : hosts.at(-1);
    if (address !== undefined) hop.for = address;
    if (proto !== undefined) hop.proto = proto.toLowerCase();
    if (host !== undefined) hop.host = host;
    hops.push(hop);
  }
  return hops;
}

/** One `Forwarded` element: `for=192.0.2.60;proto=https;host=shop.example` (quoted values, `[v6]:port` addresses). */
function parseElement(element: string): Hop {
  const hop: Hop = {};
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    const key = pair.slice(0, eq).trim().toLowerCase();
    let value = pair.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (key === 'for') hop.for = nodeAddress(value);
    else if (key === 'proto') hop.proto = value.toLowerCase();
    else if (key === 'host') hop.host = value;
  }
  return hop;
}

/** A `Forwarded` node without its port: `[2001:db8::1]:4711` → `2001:db8::1`, `192.0.2.43:47011` → `192.0.2.43`. */
function nodeAddress(node: string): string {
  if (node.startsWith('[')) return node.slice(1, node.indexOf(']') === -1 ? undefined : node.indexOf(']'));
  const colon = node.indexOf(':');
  return colon !== -1 && node.indexOf(':', colon + 1) === -1 ? node.slice(0, colon) : node;
}

function list(value: string | string[] | undefined): string[] {
  const text = joined(value);
  if (text === undefined) return [];
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function joined(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.trim() === '' ? undefined : text;
}

/** `::ffff:10.1.2.3` → `10.1.2.3`: an IPv4 client on a dual-stack socket. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
