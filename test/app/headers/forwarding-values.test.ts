import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forwardedForEntry, forwardedHost, forwardedNode, forwardedProtocol } from '../../../src/app/headers/forwarding-values.ts';

test('forwardedForEntry: bare addresses, IPv6 in brackets, a port; nothing else', () => {
  const valid: Record<string, string> = {
    '192.0.2.7': '192.0.2.7',
    ' 192.0.2.7\t': '192.0.2.7',
    '192.0.2.7:4711': '192.0.2.7',
    '2001:db8::7': '2001:db8::7',
    '[2001:db8::7]': '2001:db8::7',
    '[2001:db8::7]:443': '2001:db8::7',
    '::ffff:192.0.2.7': '192.0.2.7',
    '[::ffff:192.0.2.7]:80': '192.0.2.7',
  };
  for (const [entry, address] of Object.entries(valid)) assert.equal(forwardedForEntry(entry), address, entry);
  for (const entry of ['', 'unknown', 'not-an-ip<script>', '192.0.2', '192.0.2.256', '192.0.2.7:', '192.0.2.7:0', '192.0.2.7:99999']) {
    assert.equal(forwardedForEntry(entry), undefined, entry);
  }
  for (const entry of [
    '[2001:db8::7',
    '[2001:db8::7]x',
    '[192.0.2.7]',
    'fe80::1%eth0',
    '[fe80::1%eth0]:80',
    '192.0.2.7:_p',
    '1'.repeat(65),
  ]) {
    assert.equal(forwardedForEntry(entry), undefined, entry);
  }
});

test('forwardedNode: RFC 7239 nodes; unknown, obfuscated names and IPv6 outside brackets name no address', () => {
  assert.equal(forwardedNode('192.0.2.43'), '192.0.2.43');
  assert.equal(forwardedNode('192.0.2.43:47011'), '192.0.2.43');
  assert.equal(forwardedNode('[2001:db8:cafe::17]'), '2001:db8:cafe::17');
  assert.equal(forwardedNode('[2001:db8:cafe::17]:_p1'), '2001:db8:cafe::17', 'an obfuscated port');
  for (const node of ['unknown', '_hidden', '2001:db8:cafe::17', '[2001:db8:cafe::17]:_', '192.0.2.43:x', '']) {
    assert.equal(forwardedNode(node), undefined, node);
  }
});

test('forwardedProtocol: http or https in any case, nothing else', () => {
  assert.equal(forwardedProtocol('HTTPS'), 'https');
  assert.equal(forwardedProtocol(' http '), 'http');
  for (const value of [undefined, '', 'javascript', 'ftp', 'https:', 'wss']) assert.equal(forwardedProtocol(value), undefined, value);
});

test('forwardedHost: a DNS name or an address, with a port from 1 to 65535', () => {
  for (const host of [
    'shop.example',
    'SHOP.example:8443',
    'localhost',
    'shop.example.',
    '192.0.2.1:80',
    '[2001:db8::1]',
    '[2001:db8::1]:65535',
  ]) {
    assert.equal(forwardedHost(host), host);
  }
  assert.equal(forwardedHost(' shop.example '), 'shop.example');
  for (const host of [
    undefined,
    '',
    'a..b',
    '.shop',
    'shop.example:0',
    'shop.example:65536',
    'user@shop.example',
    'shop/x',
    '[::1',
    '[fe80::1%eth0]',
    `${'a'.repeat(254)}`,
  ]) {
    assert.equal(forwardedHost(host), undefined, host);
  }
});
