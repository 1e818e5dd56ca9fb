import { isIPv6 } from 'node:net';
import { type TestContext, test } from 'node:test';
import { ipPrefix } from '../../src/utils/ip-prefix.ts';

test('an IPv6 address becomes its /56 network in the canonical form, however it is written', (t: TestContext) => {
  const cases: [string, string][] = [
    ['2001:db8:1:ff42::7', '2001:db8:1:ff00::/56'],
    ['2001:0DB8:0001:FF42:0000:0000:0000:0007', '2001:db8:1:ff00::/56'],
    ['2001:db8:1:ffff:ffff:ffff:ffff:ffff', '2001:db8:1:ff00::/56'],
    ['2001:db8:1:ff00::', '2001:db8:1:ff00::/56'],
    ['2001:db8:1:100::1', '2001:db8:1:100::/56'],
    ['2001:db8::1', '2001:db8::/56'],
    ['::1', '::/56'],
    ['::', '::/56'],
    ['fe80::1%eth0', 'fe80::/56'],
    ['fe80::1%25', 'fe80::/56'],
    ['::1.2.3.4', '::/56'],
    ['64:ff9b::192.0.2.33', '64:ff9b::/56'],
  ];
  for (const [address, key] of cases) t.assert.equal(ipPrefix(address, 56), key, address);
});

test('the prefix length changes the network; /128 is the address alone, /0 everything', (t: TestContext) => {
  const address = '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff';
  t.assert.equal(ipPrefix(address, 64), '2001:db8:aaaa:bbbb::/64');
  t.assert.equal(ipPrefix(address, 48), '2001:db8:aaaa::/48');
  t.assert.equal(ipPrefix(address, 60), '2001:db8:aaaa:bbb0::/60');
  t.assert.equal(ipPrefix(address, 1), '::/1');
  t.assert.equal(ipPrefix('ffff::', 1), '8000::/1');
  t.assert.equal(ipPrefix(address, 128), `${address}/128`);
  t.assert.equal(ipPrefix('2001:DB8::0001', 128), '2001:db8::1/128');
  t.assert.equal(ipPrefix(address, 0), '::/0');
  t.assert.equal(ipPrefix('::1', 0), '::/0');
  t.assert.equal(ipPrefix('::1', -5), '::/0');
  t.assert.equal(ipPrefix('::1', 300), '::1/128');
  t.assert.equal(ipPrefix('::1', Number.NaN), '::1/128');
});

test('the canonical form compresses the first longest run of two or more zero groups, never a single one', (t: TestContext) => {
  t.assert.equal(ipPrefix('2001:db8:0:0:1:0:0:1', 128), '2001:db8::1:0:0:1/128');
  t.assert.equal(ipPrefix('2001:0:0:1:0:0:0:1', 128), '2001:0:0:1::1/128');
  t.assert.equal(ipPrefix('2001:db8:0:1:1:1:1:1', 128), '2001:db8:0:1:1:1:1:1/128');
  t.assert.equal(ipPrefix('1:0:0:0:0:0:0:0', 128), '1::/128');
  t.assert.equal(ipPrefix('0:0:0:0:0:0:0:1', 128), '::1/128');
});

test('an IPv4 address stays whole; one mapped in IPv6 counts as the IPv4 address', (t: TestContext) => {
  t.assert.equal(ipPrefix('192.0.2.1', 56), '192.0.2.1');
  t.assert.equal(ipPrefix('::ffff:192.0.2.1', 56), '192.0.2.1');
  t.assert.equal(ipPrefix('::FFFF:192.0.2.1', 128), '192.0.2.1');
  t.assert.equal(ipPrefix('::ffff:c000:201', 56), '192.0.2.1');
  t.assert.equal(ipPrefix('0:0:0:0:0:ffff:192.0.2.255', 1), '192.0.2.255');
});

test('what is not an address is returned as given', (t: TestContext) => {
  const invalid = [
    '',
    'unknown',
    ':',
    ':1',
    '1:',
    ':::',
    '1:::2',
    '1::2::3',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7::8',
    '12345::',
    'g::1',
    '::ffff:1.2.3',
    '::ffff:1.2.3.4.5',
    '::ffff:256.2.3.4',
    '::ffff:01.2.3.4',
    '::1.2.3.4:5',
    '1:2:3:4:5:6:7:1.2.3.4',
    '[::1]',
    '%eth0',
  ];
  for (const address of invalid) t.assert.equal(ipPrefix(address, 56), address, JSON.stringify(address));
});

test('every valid IPv6 address gives a network in the form URL writes it, its own network again', (t: TestContext) => {
  // a deterministic spread of addresses with zero runs at every place
  for (let seed = 1; seed < 2_000; seed++) {
    const groups = Array.from(
      { length: 8 },
      (_, g) => ((seed * (g + 7) * 2_654_435_761) >>> (g * 3)) & (seed % (g + 2) === 0 ? 0 : 0xffff),
    );
    const address = groups.map((group) => group.toString(16)).join(':');
    for (const bits of [0, 7, 56, 64, 100, 128]) {
      const key = ipPrefix(address, bits);
      const [network = '', length] = key.split('/');
      if (length === undefined) continue; // an IPv4 address mapped in IPv6
      t.assert.ok(isIPv6(network), key);
      // the WHATWG URL serializer writes IPv6 hosts as RFC 5952 does: an independent check of the form
      t.assert.equal(new URL(`http://[${address}]/`).hostname, `[${ipPrefix(address, 128).slice(0, -4)}]`);
      t.assert.equal(new URL(`http://[${network}]/`).hostname, `[${network}]`);
      t.assert.equal(length, String(bits));
      t.assert.equal(ipPrefix(network, bits), key, `${address}/${bits}`);
    }
  }
});
