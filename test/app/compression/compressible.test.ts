import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCompressible } from '../../../src/app/compression/compressible.ts';

test('text, JSON, XML, JavaScript and friends are compressible', () => {
  for (const type of [
    'application/json',
    'application/json; charset=utf-8',
    'application/problem+json',
    'application/vnd.api+json; charset=utf-8',
    'application/ld+json',
    'application/x-ndjson',
    'text/plain',
    'text/html; charset=utf-8',
    'text/csv',
    'TEXT/CSS',
    'text/javascript',
    'application/javascript',
    'application/xml',
    'application/atom+xml',
    'image/svg+xml',
    'application/x-www-form-urlencoded',
    'application/wasm',
    'font/ttf',
  ]) {
    assert.equal(isCompressible(type), true, type);
  }
});

test('event streams, compressed formats and unknown types are not', () => {
  for (const type of [
    '',
    'text/event-stream',
    'text/event-stream; charset=utf-8',
    'image/png',
    'image/jpeg',
    'video/mp4',
    'application/octet-stream',
    'application/zip',
    'application/gzip',
    'application/pdf',
    'font/woff2',
    'application/jsonish',
    'nonsense',
  ]) {
    assert.equal(isCompressible(type), false, type);
  }
});
