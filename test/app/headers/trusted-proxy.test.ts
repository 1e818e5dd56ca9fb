import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { clientOf, compileTrust } from '../../../src/app/headers/trusted-proxy.ts';
import { controller, testApp } from '../../helpers/app.ts';

function request(remoteAddress: string, headers: Record<string, string> = {}, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress, encrypted }, headers: { host: 'svc.internal:3000', ...headers } } as unknown as IncomingMessage;
}

describe('clientOf', () => {
  test('no trust: the socket is the client, forwarding headers ignored', () => {
    const req = request('10.0.0.5', { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' });
    assert.deepEqual(clientOf(req, compileTrust(0)), { ip: '10.0.0.5', protocol: 'http', host: 'svc.internal:3000' });
    assert.deepEqual(clientOf(req, compileTrust([])), { ip: '10.0.0.5', protocol: 'http', host: 'svc.internal:3000' });
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
    assert.equal(clientOf(request('192.0.2.1', forged), trust).ip, '192.0.2.1', 'an untrusted peer: its headers are not read');
    assert.equal(clientOf(request('::1', { 'x-forwarded-for': '2001:db8::7' }), trust).ip, '2001:db8::7');
  });

  test('Forwarded (RFC 7239) wins over X-Forwarded-*: quoted values, ports and IPv6 brackets', () => {
    const req = request('10.0.0.5', {
      forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https;host=shop.example, for=10.0.0.9:8080',
      'x-forwarded-for': '6.6.6.6',
    });
    assert.deepEqual(clientOf(req, compileTrust(['10.0.0.0/8'])), { ip: '2001:db8:cafe::17', protocol: 'https', host: 'shop.example' });
  });
});

test('ctx.ip, ctx.protocol and ctx.host through the App, the rate-limit key and the log line', async () => {
  const { app, logs } = testApp({ trustProxy: ['127.0.0.1'] });
  app.registerController(
    controller({
      method: 'GET',
      path: '/whoami',
      rateLimit: { max: 1, windowMs: 60_000 },
      handler: (ctx) => ({ ip: ctx.ip, protocol: ctx.protocol, host: ctx.host }),
    }),
  );
  const as = (client: string) =>
    app.inject({
      url: '/whoami',
      headers: { 'x-forwarded-for': client, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' },
    });
  const first = await as('203.0.113.7');
  assert.deepEqual(first.json(), { ip: '203.0.113.7', protocol: 'https', host: 'shop.example' });
  assert.equal((await as('198.51.100.9')).statusCode, 200, 'another client behind the proxy: its own count');
  assert.equal((await as('203.0.113.7')).statusCode, 429, 'the same client again: over its limit');
  assert.ok(logs.lines.some((l) => l['msg'] === 'request completed' && l['ip'] === '198.51.100.9'));
});
