import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Encoding, negotiateEncoding } from '../../../src/app/compression/negotiate.ts';

const ALL: readonly Encoding[] = ['zstd', 'br', 'gzip'];

describe('negotiateEncoding', () => {
  test('no header, or an empty one: identity', () => {
    assert.equal(negotiateEncoding(undefined, ALL), 'identity');
    assert.equal(negotiateEncoding('', ALL), 'identity');
    assert.equal(negotiateEncoding(' , ', ALL), 'identity');
  });

  test("equal weights: the server's order decides", () => {
    assert.equal(negotiateEncoding('gzip, deflate, br, zstd', ALL), 'zstd');
    assert.equal(negotiateEncoding('gzip, deflate, br', ALL), 'br');
    assert.equal(negotiateEncoding('gzip, br', ['gzip', 'br']), 'gzip');
    assert.equal(negotiateEncoding('GZIP', ALL), 'gzip');
    assert.equal(negotiateEncoding('x-gzip', ALL), 'gzip');
  });

  test('q-values: the highest wins; q=0 refuses', () => {
    assert.equal(negotiateEncoding('br;q=0.5, gzip', ALL), 'gzip');
    assert.equal(negotiateEncoding('zstd;q=0.2, br;q=0.9, gzip;q=0.8', ALL), 'br');
    assert.equal(negotiateEncoding('br;q=1.0, gzip;q=1', ALL), 'br');
    assert.equal(negotiateEncoding('zstd;q=0, br;q=0, gzip;q=0.001', ALL), 'gzip');
    assert.equal(negotiateEncoding('gzip;q=0', ALL), 'identity');
    assert.equal(negotiateEncoding('br ; q=0.7 , gzip;Q=0.6', ALL), 'br');
  });

  test('identity: weighed against the best coding, refusable', () => {
    // identity preferred over the only coding the client accepts
    assert.equal(negotiateEncoding('gzip;q=0.4, identity', ALL), 'identity');
    // equal weights: compressed
    assert.equal(negotiateEncoding('gzip;q=0.5, identity;q=0.5', ALL), 'gzip');
    assert.equal(negotiateEncoding('identity;q=0, gzip', ALL), 'gzip');
    // nothing offered acceptable, identity refused: identity all the same (no 406)
    assert.equal(negotiateEncoding('identity;q=0, deflate', ALL), 'identity');
    assert.equal(negotiateEncoding('identity;q=0', ALL), 'identity');
  });

  test('*: the codings not named, the most widely decodable first: gzip, then Brotli, never zstd', () => {
    // Prism's proxy (node-fetch) sends `*` and decodes no zstd: "any coding" gets gzip
    assert.equal(negotiateEncoding('*', ALL), 'gzip');
    assert.equal(negotiateEncoding('*', ['zstd', 'br']), 'br');
    assert.equal(negotiateEncoding('*', ['zstd']), 'identity');
    assert.equal(negotiateEncoding('*;q=0.1, identity;q=0', ['br']), 'br');
    assert.equal(negotiateEncoding('gzip;q=0, *', ALL), 'br');
    assert.equal(negotiateEncoding('zstd;q=0, *', ALL), 'gzip');
    assert.equal(negotiateEncoding('*;q=0', ALL), 'identity');
    assert.equal(negotiateEncoding('gzip;q=0.5, *;q=0.1', ALL), 'gzip');
    // `*` weighs identity too when the header does not name it
    assert.equal(negotiateEncoding('*;q=0.3, gzip;q=0.2', ALL), 'br');
  });

  test('*: a coding the client names wins a tie with one it does not', () => {
    assert.equal(negotiateEncoding('zstd, *', ALL), 'zstd');
    assert.equal(negotiateEncoding('br, *', ALL), 'br');
    assert.equal(negotiateEncoding('zstd;q=0.5, *', ALL), 'gzip');
    assert.equal(negotiateEncoding('zstd, *;q=0.5', ALL), 'zstd');
  });

  test('unknown codings and malformed entries are ignored', () => {
    assert.equal(negotiateEncoding('deflate, compress, snappy', ALL), 'identity');
    assert.equal(negotiateEncoding('deflate, gzip', ALL), 'gzip');
    assert.equal(negotiateEncoding('br;q=2, gzip', ALL), 'gzip');
    assert.equal(negotiateEncoding('br;q=abc, gzip;q=0.1', ALL), 'gzip');
    assert.equal(negotiateEncoding('br;level=9, gzip;q=0.1', ALL), 'gzip');
    assert.equal(negotiateEncoding('br;q=0.5000, gzip;q=0.1', ALL), 'gzip');
    assert.equal(negotiateEncoding(';q=1, ,gzip', ALL), 'gzip');
    assert.equal(negotiateEncoding('a'.repeat(10_000), ALL), 'identity');
  });

  test('only what the server offers', () => {
    assert.equal(negotiateEncoding('zstd, br', ['gzip']), 'identity');
    assert.equal(negotiateEncoding('zstd, br, gzip;q=0.1', ['gzip']), 'gzip');
    assert.equal(negotiateEncoding('zstd', []), 'identity');
  });
});
