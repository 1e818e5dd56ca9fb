import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { type ForwardedElement, parseForwardedElement } from './forwarded-element.ts';
import { forwardedForEntry, forwardedHost, forwardedProtocol, unmapped } from './forwarding-values.ts';

/** `trustProxy`: how many proxies stand in front (a hop count; 0: none), or the addresses and CIDRs of those trusted. */
export type TrustProxySetting = number | readonly string[];

/**
 * `trustProxyHeader`: which headers the trusted proxies set, `x-forwarded` (`X-Forwarded-For`, `-Proto`,
 * `-Host`) or `forwarded` (RFC 7239 `Forwarded`). The other kind is never read.
 */
export type ForwardingHeader = 'x-forwarded' | 'forwarded';

/** Whether the hop at `index` (0: the socket's peer) with `address` is a proxy whose headers are believed. */
export interface ProxyTrust {
  (address: string, index: number): boolean;
  /** The headers those proxies set. */
  readonly header: ForwardingHeader;
}

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
 * Compiles `trustProxy` and `trustProxyHeader`: `0` (the default) trusts no one, so the socket's peer
 * is the client (undefined: nothing to read); a hop count N trusts the N nearest proxies whoever they
 * are (an ingress and a load balancer: 2); a list trusts the peers whose address it holds
 * (`10.0.0.0/8`, `::1`, `192.168.1.7`…), IPv4 addresses mapped in IPv6 (`::ffff:10.1.2.3`) read as
 * IPv4. `header` says which headers they set (`x-forwarded` by default).
 *
 * @example
 * const trust = compileTrust(['10.0.0.0/8']);
 * trust?.('10.1.2.3', 0); // true
 * compileTrust(1, 'forwarded')?.header; // 'forwarded'
 */
export function compileTrust(setting: TrustProxySetting, header: ForwardingHeader = 'x-forwarded'): ProxyTrust | undefined {
  const believes = believer(setting);
  return believes === undefined ? undefined : Object.assign(believes, { header });
}

function believer(setting: TrustProxySetting): ((address: string, index: number) => boolean) | undefined {
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
 * The client of a request: the socket's peer, unless it is a trusted proxy. Then the chain of the
 * headers `trust.header` names (the other kind is ignored) is walked from the nearest hop back: the
 * first address not trusted is the client, or the farthest one if all are. An entry that is no IP
 * address ends the walk: the last valid address before it (the hop that forwarded the junk, or the
 * peer) is the client, so junk never lets a client skip a trusted hop. The scheme and host are those
 * recorded for that hop (its `Forwarded` element; the `X-Forwarded-Proto`/`-Host` entry aligned with
 * its `-For` entry, or their nearest entry when the lists are not aligned), kept only when valid
 * (`http`/`https`; `host[:port]`), else the socket's and the `Host` header's. Headers from a peer
 * that is not trusted are ignored.
 *
 * @example
 * clientOf(req, compileTrust(1)); // { ip: '203.0.113.7', protocol: 'https', host: 'shop.example' }
 */
export function clientOf(req: IncomingMessage, trust: ProxyTrust | undefined): ClientOrigin {
  const peer = unmapped(req.socket?.remoteAddress ?? '');
  const protocol = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true ? 'https' : 'http';
  const own: ClientOrigin = { ip: peer, protocol, host: req.headers.host ?? '' };
  if (trust === undefined || !trust(peer, 0)) return own;
  return trust.header === 'forwarded' ? throughForwarded(req, trust, own) : throughXForwarded(req, trust, own);
}

/** `X-Forwarded-For`, walked from its last entry back; `-Proto` and `-Host` aligned with it. */
function throughXForwarded(req: IncomingMessage, trust: ProxyTrust, own: ClientOrigin): ClientOrigin {
  const fors = joined(req.headers['x-forwarded-for']);
  const protos = joined(req.headers['x-forwarded-proto']);
  const hosts = joined(req.headers['x-forwarded-host']);
  if (fors === undefined && protos === undefined && hosts === undefined) return own;
  let ip = own.ip;
  // the hop taken, counted from the nearest entry (1); 0: the peer itself
  let taken = 0;
  if (fors !== undefined) {
    let end = fors.length;
    for (let index = 1; ; index++) {
      const start = fors.lastIndexOf(',', end - 1);
      const address = forwardedForEntry(fors.slice(start + 1, end));
      if (address === undefined) break;
      ip = address;
      taken = index;
      if (start === -1 || !trust(address, index)) break;
      end = start;
    }
  }
  // as long as -For, -Proto and -Host name the hop each entry was written for, the hop taken has its
  // own; otherwise (one value, set by the edge proxy, as nginx and most ingresses do) the nearest
  // entry, written by the trusted peer, stands for the client's
  const count = fors === undefined ? 0 : entries(fors);
  const at = (list: string) => (taken > 0 && entries(list) === count ? taken : 1);
  return {
    ip,
    protocol: (protos !== undefined && forwardedProtocol(fromEnd(protos, at(protos)))) || own.protocol,
    host: (hosts !== undefined && forwardedHost(fromEnd(hosts, at(hosts)))) || own.host,
  };
}

/** `Forwarded` (RFC 7239), walked from its last element back. */
function throughForwarded(req: IncomingMessage, trust: ProxyTrust, own: ClientOrigin): ClientOrigin {
  const text = joined(req.headers.forwarded);
  if (text === undefined) return own;
  let ip = own.ip;
  let taken: ForwardedElement | undefined;
  let nearest: ForwardedElement | undefined;
  let end = text.length;
  for (let index = 1; ; index++) {
    const start = text.lastIndexOf(',', end - 1);
    const element = parseForwardedElement(text.slice(start + 1, end));
    if (index === 1) nearest = element;
    if (element?.for === undefined) break;
    ip = element.for;
    taken = element;
    if (start === -1 || !trust(element.for, index)) break;
    end = start;
  }
  // the peer itself taken: what it recorded of its own client's connection
  const hop = taken ?? nearest;
  return { ip, protocol: forwardedProtocol(hop?.proto) ?? own.protocol, host: forwardedHost(hop?.host) ?? own.host };
}

/** The `n`th comma-separated entry of `list` from its end (1: the last). */
function fromEnd(list: string, n: number): string {
  let end = list.length;
  for (let i = 1; i < n; i++) end = list.lastIndexOf(',', end - 1);
  return list.slice(list.lastIndexOf(',', end - 1) + 1, end);
}

/** How many comma-separated entries `list` has. */
function entries(list: string): number {
  let count = 1;
  for (let at = list.indexOf(','); at !== -1; at = list.indexOf(',', at + 1)) count++;
  return count;
}

/** A header's value, several lines joined as one list; undefined when absent or blank. */
function joined(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.trim() === '' ? undefined : text;
}
