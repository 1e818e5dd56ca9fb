import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { clientOf, compileTrust } from '../../../src/app/headers/trusted-proxy.ts';
import { controller, testApp } from '../../helpers/app.ts';

function request(remoteAddress: string, headers: Record<string, string | string[]> = {}, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress, encrypted }, headers: { host: 'svc.internal:3000', ...headers } } as unknown as IncomingMessage;
}

/** What the socket says of a plain-HTTP request from `ip`: the client as flotilla sees it without headers. */
const own = (ip: string) => ({ ip, protocol: 'http', host: 'svc.internal:3000' });

describe('clientOf', () => {
  test('no trust: the socket is the client, forwarding headers ignored', () => {
    const req = request('10.0.0.5', { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' });
    assert.equal(compileTrust(0), undefined, 'nothing to read per request');
    assert.deepEqual(clientOf(req, compileTrust(0)), own('10.0.0.5'));
    assert.deepEqual(clientOf(req, compileTrust([])), own('10.0.0.5'));
    assert.equal(clientOf(request('::1', {}, true), undefined).protocol, 'https', 'a TLS socket is https');
  });

  test('a hop count believes that many hops, and no more', () => {
    const headers = { 'x-forwarded-for': '198.51.100.9, 203.0.113.7, 10.0.0.2', 'x-forwarded-proto': 'http, https, https' };
    assert.deepEqual(clientOf(request('10.0.0.5', headers), compileTrust(1)), {
      ip: '10.0.0.2',
      protocol: 'https',
      host: 'svc.internal:3000',
    });
    assert.equal(clientOf(request('10.0.0.5', headers), compileTrust(2)).ip, '203.0.113.7');
    assert.equal(clientOf(request('10.0.0.5', headers), compileTrust(3)).ip, '198.51.100.9');
    assert.equal(clientOf(request('10.0.0.5', headers), compileTrust(3)).protocol, 'http', 'aligned lists: the hop taken has its own');
    assert.equal(clientOf(request('10.0.0.5', headers), compileTrust(10)).ip, '198.51.100.9', 'all trusted: the farthest');
  });

  test('a list believes the peers whose address it holds: a forged entry beyond them is ignored', () => {
    const trust = compileTrust(['10.0.0.0/8', '::1']);
    const forged = {
      'x-forwarded-for': '1.2.3.4, 203.0.113.7, 10.1.1.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'shop.example',
    };
    assert.deepEqual(clientOf(request('::ffff:10.0.0.5', forged), trust), { ip: '203.0.113.7', protocol: 'https', host: 'shop.example' });
    assert.deepEqual(clientOf(request('192.0.2.1', forged), trust), own('192.0.2.1'), 'an untrusted peer: its headers are not read');
    assert.equal(clientOf(request('::1', { 'x-forwarded-for': '2001:db8::7' }), trust).ip, '2001:db8::7');
  });

  test("x-forwarded (the default): a client's Forwarded is ignored entirely, as nginx passes it through", () => {
    // nginx with `X-Forwarded-For $proxy_add_x_forwarded_for`: the client's own copy, then the address nginx saw
    const spoofed = {
      forwarded: 'for=9.8.7.6;proto=https;host=evil.example',
      'x-forwarded-for': '9.8.7.6, 203.0.113.7',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'shop.example',
    };
    assert.deepEqual(clientOf(request('127.0.0.1', spoofed), compileTrust(1)), {
      ip: '203.0.113.7',
      protocol: 'http',
      host: 'shop.example',
    });
    assert.deepEqual(clientOf(request('127.0.0.1', { forwarded: 'for=9.8.7.6;proto=https' }), compileTrust(1)), own('127.0.0.1'));
    assert.deepEqual(clientOf(request('127.0.0.1', spoofed), compileTrust(1, 'x-forwarded')).ip, '203.0.113.7');
  });

  test('forwarded: RFC 7239 elements (quoted values, ports, IPv6 in brackets); X-Forwarded-* ignored entirely', () => {
    const trust = compileTrust(['10.0.0.0/8'], 'forwarded');
    const req = request('10.0.0.5', {
      forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https;host=shop.example, for=10.0.0.9:8080;proto=http',
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'evil.example',
    });
    assert.deepEqual(clientOf(req, trust), { ip: '2001:db8:cafe::17', protocol: 'https', host: 'shop.example' });
    const only = request('10.0.0.5', { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    assert.deepEqual(clientOf(only, trust), own('10.0.0.5'));
    const mixedCase = request('10.0.0.5', { forwarded: 'For=192.0.2.60;Proto=HTTPS;By=10.0.0.5' });
    assert.deepEqual(clientOf(mixedCase, compileTrust(1, 'forwarded')), { ip: '192.0.2.60', protocol: 'https', host: 'svc.internal:3000' });
    const lines = request('10.0.0.5', { forwarded: ['for=192.0.2.60', 'for=198.51.100.4'] });
    assert.equal(clientOf(lines, compileTrust(1, 'forwarded')).ip, '198.51.100.4', 'several header lines are one list');
  });

  test('X-Forwarded-For: an address that is not an IP is never taken, nor does it let a client skip a trusted hop', () => {
    const peer = '10.0.0.5';
    const ip = (xff: string, hops: number) => clientOf(request(peer, { 'x-forwarded-for': xff }), compileTrust(hops)).ip;
    assert.equal(ip('not-an-ip<script>', 1), peer, 'junk from the nearest hop: the peer that forwarded it');
    assert.equal(ip('9.8.7.6, not-an-ip<script>', 3), peer, 'the walk stops at the junk, the address beyond is not reached');
    assert.equal(ip('9.8.7.6, junk, 10.0.0.2', 3), '10.0.0.2', 'the hop that forwarded the junk');
    assert.equal(ip('9.8.7.6, , 10.0.0.2', 3), '10.0.0.2', 'an empty entry is junk too');
    assert.equal(ip('junk, 203.0.113.7', 1), '203.0.113.7', 'junk beyond the client is not looked at');
    assert.equal(ip('1.2.3', 1), peer);
    assert.equal(ip('999.1.1.1', 1), peer);
    assert.equal(ip('fe80::1%eth0', 1), peer, 'a zone is no client address');
    assert.equal(ip('unknown', 1), peer);
    assert.equal(ip(`${'1'.repeat(5000)}, 203.0.113.7`, 1), '203.0.113.7');
    assert.equal(ip(' 203.0.113.7 ', 1), '203.0.113.7', 'spaces around an entry');
    assert.equal(ip('203.0.113.7:4711', 1), '203.0.113.7', 'IPv4 with a port');
    assert.equal(ip('[2001:db8::1]:4711', 1), '2001:db8::1', 'IPv6 in brackets with a port');
    assert.equal(ip('[2001:db8::1]', 1), '2001:db8::1');
    assert.equal(ip('::ffff:203.0.113.7', 1), '203.0.113.7', 'IPv4 mapped in IPv6 reads as IPv4');
    assert.equal(ip('203.0.113.7:0', 1), peer, 'port 0');
    assert.equal(ip('203.0.113.7:65536', 1), peer, 'a port past 65535');
    assert.equal(ip('[2001:db8::1', 1), peer, 'a bracket left open');
    assert.equal(ip('[203.0.113.7]', 1), peer, 'IPv4 in brackets');
  });

  test('Forwarded: `unknown`, obfuscated and malformed nodes are never taken', () => {
    const peer = '10.0.0.5';
    const ip = (forwarded: string, hops: number) => clientOf(request(peer, { forwarded }), compileTrust(hops, 'forwarded')).ip;
    assert.equal(ip('for=unknown', 1), peer);
    assert.equal(ip('for=_hidden', 1), peer);
    assert.equal(ip('for="not-an-ip<script>"', 1), peer);
    assert.equal(ip('for="2001:db8::1"', 1), peer, 'IPv6 outside brackets is no node');
    assert.equal(ip('proto=https', 1), peer, 'an element without for');
    assert.equal(ip('for=192.0.2.60;for=198.51.100.1', 1), peer, 'a parameter given twice');
    assert.equal(ip('for="192.0.2.60', 1), peer, 'a quote left open');
    assert.equal(ip('for="[2001:db8::1]:_p1"', 1), '2001:db8::1', 'an obfuscated port');
    assert.equal(ip('for=192.0.2.60;x="', 1), peer);
    // a client's open quote cannot swallow the element the proxy appends after it
    assert.equal(ip('for=9.8.7.6;x=", for=203.0.113.5', 1), '203.0.113.5');
    assert.equal(ip('for=9.8.7.6;x=", for=203.0.113.5', 2), '203.0.113.5', 'nor make its own address count');
    assert.equal(ip('for=9.8.7.6, for=unknown, for=10.0.0.2', 3), '10.0.0.2', 'the walk stops at the junk');
  });

  test("the protocol is http or https, the host a valid host[:port]; anything else: the socket's and the Host", () => {
    const trust = compileTrust(1);
    const of = (headers: Record<string, string>) => clientOf(request('10.0.0.5', { 'x-forwarded-for': '203.0.113.7', ...headers }), trust);
    assert.equal(of({ 'x-forwarded-proto': 'javascript' }).protocol, 'http');
    assert.equal(clientOf(request('10.0.0.5', { 'x-forwarded-proto': 'javascript' }, true), trust).protocol, 'https', "the TLS socket's");
    assert.equal(of({ 'x-forwarded-proto': 'HTTPS' }).protocol, 'https', 'in any case');
    assert.equal(of({ 'x-forwarded-proto': 'https, ftp' }).protocol, 'http', 'the nearest entry when the lists are not aligned');
    for (const host of [
      'shop.example',
      'shop.example:8443',
      'shop.example.',
      '192.0.2.1:80',
      '[2001:db8::1]',
      '[2001:db8::1]:443',
      'a_b-c',
    ]) {
      assert.equal(of({ 'x-forwarded-host': host }).host, host);
    }
    for (const host of [
      'evil.example/<script>',
      'shop.example:0',
      'shop.example:65536',
      'shop.example:',
      'a..b',
      '[::1',
      '[junk]:80',
      'x y',
      '',
      'shop.example:80:80',
    ]) {
      assert.equal(of({ 'x-forwarded-host': host }).host, 'svc.internal:3000', `${JSON.stringify(host)} is no host`);
    }
    const forwarded = (value: string) => clientOf(request('10.0.0.5', { forwarded: value }), compileTrust(1, 'forwarded'));
    assert.deepEqual(forwarded('for=203.0.113.7;proto=javascript;host="evil/<x>"'), own('203.0.113.7'));
    assert.deepEqual(
      forwarded('for=unknown;proto=https;host=shop.example'),
      { ip: '10.0.0.5', protocol: 'https', host: 'shop.example' },
      'the peer taken: what it recorded of its client',
    );
  });
});

describe('through the App', () => {
  function whoami(config: Parameters<typeof testApp>[0]) {
    const { app, logs } = testApp(config);
    app.registerController(
      controller({
        method: 'GET',
        path: '/whoami',
        rateLimit: { max: 1, windowMs: 60_000 },
        handler: (ctx) => ({ ip: ctx.ip, protocol: ctx.protocol, host: ctx.host }),
      }),
    );
    return { app, logs };
  }

  test('ctx.ip, ctx.protocol and ctx.host, the rate-limit key and the log line', async () => {
    const { app, logs } = whoami({ trustProxy: ['127.0.0.1'] });
    const as = (client: string) =>
      app.inject({
        url: '/whoami',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': client, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' },
      });
    const first = await as('203.0.113.7');
    assert.deepEqual(first.json(), { ip: '203.0.113.7', protocol: 'https', host: 'shop.example' });
    assert.equal((await as('198.51.100.9')).statusCode, 200, 'another client behind the proxy: its own count');
    assert.equal((await as('203.0.113.7')).statusCode, 429, 'the same client again: over its limit');
    assert.ok(logs.lines.some((l) => l['msg'] === 'request completed' && l['ip'] === '198.51.100.9'));
  });

  test('junk never reaches the log line or the rate-limit key; a spoofed Forwarded changes nothing', async () => {
    const { app, logs } = whoami({ trustProxy: 1 });
    const junk = await app.inject({
      url: '/whoami',
      remoteAddress: '10.0.0.5',
      headers: {
        'x-forwarded-for': 'not-an-ip<script>',
        'x-forwarded-proto': 'javascript',
        'x-forwarded-host': 'evil/<x>',
        host: 'svc:3000',
      },
    });
    assert.deepEqual(junk.json(), { ip: '10.0.0.5', protocol: 'http', host: 'svc:3000' });
    assert.ok(!JSON.stringify(logs.lines).includes('<script>'), 'the junk is in no log line');
    const spoofed = await app.inject({
      url: '/whoami',
      remoteAddress: '10.0.0.5',
      headers: { forwarded: 'for=9.8.7.6;proto=https', 'x-forwarded-for': '9.8.7.6, 10.0.0.5' },
    });
    assert.equal(spoofed.statusCode, 429, 'the same client as the junk one: its address, not the one it claims');
  });

  test('new App({ trustProxyHeader: "forwarded" }) reads Forwarded and ignores X-Forwarded-*', async () => {
    const { app } = whoami({ trustProxy: 1, trustProxyHeader: 'forwarded' });
    const reply = await app.inject({
      url: '/whoami',
      remoteAddress: '10.0.0.5',
      headers: { forwarded: 'for=192.0.2.60;proto=https;host=shop.example', 'x-forwarded-for': '6.6.6.6', host: 'svc:3000' },
    });
    assert.deepEqual(reply.json(), { ip: '192.0.2.60', protocol: 'https', host: 'shop.example' });
    const ignored = await app.inject({
      url: '/whoami',
      remoteAddress: '10.0.0.6',
      headers: { 'x-forwarded-for': '6.6.6.6', host: 'svc:3000' },
    });
    assert.deepEqual(ignored.json(), { ip: '10.0.0.6', protocol: 'http', host: 'svc:3000' });
  });
});
