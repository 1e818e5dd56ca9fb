import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseForwardedElement } from '../../../src/app/headers/forwarded-element.ts';

test('an element: tokens and quoted strings, names in any case, unknown parameters skipped', () => {
  assert.deepEqual(parseForwardedElement(' For="[2001:db8:cafe::17]:4711" ; PROTO=https;host="shop.example";by=10.0.0.1;ext=x '), {
    for: '2001:db8:cafe::17',
    proto: 'https',
    host: 'shop.example',
  });
  assert.deepEqual(parseForwardedElement('for=192.0.2.60;'), { for: '192.0.2.60', proto: undefined, host: undefined });
  assert.deepEqual(
    parseForwardedElement('for=unknown;proto=http'),
    { for: undefined, proto: 'http', host: undefined },
    'no address, still an element',
  );
});

test('a malformed element is undefined: a pair without =, an open or inner quote, an escape, a parameter twice', () => {
  for (const element of [
    'for',
    'for=192.0.2.60;junk',
    'for="192.0.2.60',
    'for=192.0.2.60"',
    'host="a"b"',
    'host="a\\"b"',
    'for=192.0.2.60;FOR=192.0.2.61',
    'proto=http;proto=https',
    'b@d=1',
  ]) {
    assert.equal(parseForwardedElement(element), undefined, element);
  }
});
