import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveMetrics } from '../../src/metrics/endpoint.ts';
import { httpRequest } from '../helpers/http.ts';

const TYPE = 'text/plain; version=0.0.4; charset=utf-8';

test('serves the text at its path with its length, HEAD without the body, anything else 404', async (t) => {
  const text = '# HELP a é\n# TYPE a gauge\na 1\n';
  const { server, port } = await serveMetrics(
    { collect: async () => text, contentType: TYPE },
    { host: '127.0.0.1', port: 0, path: '/metrics' },
  );
  t.after(() => server.close());
  const get = await httpRequest(port, '/metrics?x=1');
  assert.equal(get.status, 200);
  assert.equal(get.body, text);
  assert.equal(get.headers['content-type'], TYPE);
  assert.equal(get.headers['content-length'], String(Buffer.byteLength(text)));
  assert.equal(get.headers['cache-control'], 'no-store');
  const head = await httpRequest(port, '/metrics', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(text)));
  assert.equal((await httpRequest(port, '/other')).status, 404);
  assert.equal((await httpRequest(port, '/metrics', { method: 'POST' })).status, 404);
});

test('a failed collection is a 500 and reported', async (t) => {
  const errors: unknown[] = [];
  const failure = new Error('registry broke');
  const source = { collect: () => Promise.reject(failure), contentType: TYPE, onError: (e: unknown) => errors.push(e) };
  const { server, port } = await serveMetrics(source, { host: '127.0.0.1', port: 0, path: '/metrics' });
  t.after(() => server.close());
  const res = await httpRequest(port, '/metrics');
  assert.equal(res.status, 500);
  assert.deepEqual(errors, [failure]);
});
