import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MULTIPART_DEFAULTS, type MultipartBody, readBody } from '../../../src/app/bodies/index.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { serve } from '../../helpers/app.ts';
import { BOUNDARY, bodyApp, digest, MULTIPART_TYPE, multipart, type PartSpec, sha256 } from './harness.ts';

const HEADERS = { 'content-type': MULTIPART_TYPE };
const LIMIT = 1 << 20;

const app = bodyApp([
  { path: '/parts', options: { kind: 'multipart', limit: LIMIT } },
  { path: '/small', options: { kind: 'multipart', limit: LIMIT, multipart: { files: 2, fields: 3, fileBytes: 100, fieldBytes: 10 } } },
  { path: '/buffered', options: { kind: 'multipart', limit: LIMIT, multipart: { buffer: true } } },
  {
    path: '/fields-only',
    options: { kind: 'multipart', limit: LIMIT },
    consume: async (body) => {
      const fields: [string, string][] = [];
      for await (const part of body as MultipartBody) if (part.kind === 'field') fields.push([part.name, part.value]);
      return { fields };
    },
  },
  {
    path: '/first',
    options: { kind: 'multipart', limit: LIMIT },
    consume: async (body) => {
      for await (const part of body as MultipartBody) return { first: part.name };
      return { first: null };
    },
  },
]);

const post = (url: string, payload: Buffer | string, headers: Record<string, string> = HEADERS) =>
  app.inject({ method: 'POST', url, headers, payload });

/** Text with a line that starts like a boundary, and isn't one. */
const NOTES = `line 1\r\n--${BOUNDARY.slice(0, -1)}\r\nline 3`;

describe('multipart bodies, streamed', () => {
  test('fields and files arrive in order; a file streams its exact bytes', async () => {
    const binary = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) & 0xff));
    const res = await post(
      '/parts',
      multipart([
        { name: 'title', value: 'Dune' },
        { name: 'cover', filename: 'cover.png', content: binary, type: 'image/png' },
        { name: 'notes', filename: 'notes.txt', content: NOTES, type: 'text/plain' },
        { name: 'title', value: 'été ✓' },
      ]),
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      parts: [
        { field: 'title', value: 'Dune' },
        { file: 'cover', filename: 'cover.png', mimeType: 'image/png', size: 5000, sha256: sha256(binary) },
        {
          file: 'notes',
          filename: 'notes.txt',
          mimeType: 'text/plain',
          size: Buffer.byteLength(NOTES),
          sha256: sha256(NOTES),
        },
        { field: 'title', value: 'été ✓' },
      ],
    });
  });

  test('a file the handler does not read is drained when it asks for the next part', async () => {
    const res = await post(
      '/fields-only',
      multipart([
        { name: 'a', value: '1' },
        { name: 'big', filename: 'big.bin', content: Buffer.alloc(300_000, 9) },
        { name: 'b', value: '2' },
      ]),
    );
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      fields: [
        ['a', '1'],
        ['b', '2'],
      ],
    });
  });

  test('a handler that leaves the loop early still answers', async () => {
    const res = await post(
      '/first',
      multipart([
        { name: 'f', filename: 'f.bin', content: Buffer.alloc(200_000, 1) },
        { name: 'a', value: '1' },
      ]),
    );
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { first: 'f' });
  });

  test('a filename keeps no directory', async () => {
    const res = await post('/parts', multipart([{ name: 'f', filename: '../../etc/passwd', content: 'x' }]));
    assert.equal(res.json().parts[0].filename, 'passwd');
  });

  test('a request without a body gives no part', async () => {
    assert.deepEqual((await app.inject({ method: 'POST', url: '/parts' })).json(), { parts: [] });
  });

  test('a media type other than multipart/form-data is a 415 with Accept-Post', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'multipart/mixed; boundary=x' }, {}]) {
      const res = await post('/parts', multipart([{ name: 'a', value: '1' }]), headers);
      assert.equal(res.statusCode, 415, JSON.stringify(headers));
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(res.headers['accept-post'], 'multipart/form-data');
    }
  });

  test('a missing or malformed boundary is a 400', async () => {
    for (const type of [
      'multipart/form-data',
      'multipart/form-data; boundary=""',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
      'multipart/form-data; boundary="ends with a space "',
      'multipart/form-data; boundary="a\\"b"',
    ]) {
      const res = await post('/parts', multipart([{ name: 'a', value: '1' }]), { 'content-type': type });
      assert.equal(res.statusCode, 400, type);
      assert.equal(res.json().code, 'BAD_REQUEST');
    }
  });

  test('a Content-Type whose parameters are malformed is a 415, as for every body kind', async () => {
    for (const type of ['multipart/form-data; boundary=', 'multipart/form-data; boundary=é', 'multipart/form-data; boundary="open']) {
      const res = await post('/parts', multipart([{ name: 'a', value: '1' }]), { 'content-type': type });
      assert.equal(res.statusCode, 415, type);
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.match(res.json().detail, /has a malformed parameter/);
    }
  });

  test('any boundary RFC 2046 allows is read, quoted or not', async () => {
    for (const boundary of ['x', 'b'.repeat(70), "it's (a) +_,-./:=? boundary", '----WebKitFormBoundary7MA4YWxkTrZu0gW']) {
      const quoted = /[ '(),/:=?]/.test(boundary) ? `"${boundary}"` : boundary;
      const res = await post('/parts', multipart([{ name: 'a', value: '1' }], { boundary }), {
        'content-type': `multipart/form-data; boundary=${quoted}`,
      });
      assert.equal(res.statusCode, 200, boundary);
      assert.deepEqual(res.json(), { parts: [{ field: 'a', value: '1' }] });
    }
  });

  test('a body cut short is a 400, before or inside a file', async () => {
    const whole = multipart([
      { name: 'a', value: '1' },
      { name: 'f', filename: 'f.txt', content: 'x'.repeat(1000) },
    ]);
    for (const payload of [
      multipart([{ name: 'a', value: '1' }], { close: false }),
      whole.subarray(0, whole.length - 200),
      whole.subarray(0, 30),
      Buffer.from('no boundary anywhere in here'),
      Buffer.alloc(0, 0).toString() + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n`,
    ]) {
      const res = await post('/parts', payload);
      assert.equal(res.statusCode, 400, payload.toString().slice(0, 80));
      assert.equal(res.json().code, 'BAD_REQUEST');
    }
  });

  test('a part without a name is a 400', async () => {
    const payload = `--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`;
    const res = await post('/parts', payload);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().detail, 'a part of the multipart body has no name');
  });
});

describe('multipart limits: each one exceeded is a 413', () => {
  const cases: { name: string; parts: PartSpec[]; detail: string }[] = [
    {
      name: 'too many files',
      parts: [1, 2, 3].map((i) => ({ name: `f${i}`, filename: `${i}.txt`, content: 'x' })),
      detail: 'the multipart body has more than 2 files',
    },
    {
      name: 'too many fields',
      parts: [1, 2, 3, 4].map((i) => ({ name: `a${i}`, value: 'x' })),
      detail: 'the multipart body has more than 3 fields',
    },
    {
      name: 'a file too large',
      parts: [{ name: 'f', filename: 'big.txt', content: 'x'.repeat(101) }],
      detail: "the file 'big.txt' exceeds the limit of 100 bytes",
    },
    { name: 'a field too large', parts: [{ name: 'a', value: 'x'.repeat(11) }], detail: "the field 'a' exceeds the limit of 10 bytes" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const res = await post('/small', multipart(c.parts));
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
      assert.equal(res.json().detail, c.detail);
      assert.equal(res.headers['connection'], 'close');
    });
  }

  test('exactly at every limit is accepted', async () => {
    const res = await post(
      '/small',
      multipart([
        { name: 'f1', filename: '1.txt', content: 'x'.repeat(100) },
        { name: 'f2', filename: '2.txt', content: '' },
        { name: 'a', value: 'x'.repeat(10) },
        { name: 'b', value: '' },
        { name: 'c', value: 'é'.repeat(5) },
      ]),
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().parts.length, 5);
  });

  test(`the defaults: ${MULTIPART_DEFAULTS.files} files, ${MULTIPART_DEFAULTS.fields} fields of ${MULTIPART_DEFAULTS.fieldBytes} bytes`, async () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, filename: `${i}`, content: 'x' }));
    const fields = (n: number, size = 1) => Array.from({ length: n }, (_, i) => ({ name: `a${i}`, value: 'v'.repeat(size) }));
    assert.equal((await post('/parts', multipart(files(MULTIPART_DEFAULTS.files)))).statusCode, 200);
    assert.equal((await post('/parts', multipart(files(MULTIPART_DEFAULTS.files + 1)))).statusCode, 413);
    assert.equal((await post('/parts', multipart(fields(MULTIPART_DEFAULTS.fields)))).statusCode, 200);
    assert.equal((await post('/parts', multipart(fields(MULTIPART_DEFAULTS.fields + 1)))).statusCode, 413);
    assert.equal((await post('/parts', multipart(fields(1, MULTIPART_DEFAULTS.fieldBytes)))).statusCode, 200);
    assert.equal((await post('/parts', multipart(fields(1, MULTIPART_DEFAULTS.fieldBytes + 1)))).statusCode, 413);
  });

  test('the body limit applies on top: a declared length over it, and a chunked body past it', async (t) => {
    const tight = bodyApp([{ path: '/parts', options: { kind: 'multipart', limit: 1000 } }]);
    const big = multipart([{ name: 'f', filename: 'f.bin', content: Buffer.alloc(5000) }]);
    const declared = await tight.inject({ method: 'POST', url: '/parts', headers: HEADERS, payload: big });
    assert.equal(declared.statusCode, 413);
    assert.equal(declared.json().detail, 'the body exceeds the limit of 1000 bytes');
    const port = await serve(t, tight);
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/parts', headers: HEADERS, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      // no Content-Length: node sends it chunked
      req.write(big.subarray(0, 2500));
      req.end(big.subarray(2500));
    });
    assert.equal(chunked.status, 413);
    assert.equal(JSON.parse(chunked.body).code, 'PAYLOAD_TOO_LARGE');
  });
});

describe('multipart bodies, buffered', () => {
  test('buffer: true reads fields as a form and files into Buffers', async () => {
    const res = await post(
      '/buffered',
      multipart([
        { name: 'tag', value: 'a' },
        { name: 'doc', filename: 'doc.txt', content: 'hello', type: 'text/plain' },
        { name: 'tag', value: 'b' },
        { name: 'title', value: 'Dune' },
      ]),
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      fields: { tag: ['a', 'b'], title: 'Dune' },
      files: [{ name: 'doc', filename: 'doc.txt', mimeType: 'text/plain', text: 'hello' }],
    });
  });

  test('field names that expand to a prototype are a 400, as in forms', async () => {
    for (const name of ['__proto__', 'a[__proto__]', 'constructor[prototype]']) {
      const res = await post('/buffered', multipart([{ name, value: 'x' }]));
      assert.equal(res.statusCode, 400, name);
      assert.equal(res.json().code, 'FORBIDDEN_KEY');
    }
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });

  test('limits and truncation fail the same way', async () => {
    const buffered = bodyApp([{ path: '/b', options: { kind: 'multipart', limit: LIMIT, multipart: { buffer: true, fileBytes: 10 } } }]);
    const inject = (payload: Buffer) => buffered.inject({ method: 'POST', url: '/b', headers: HEADERS, payload });
    assert.equal((await inject(multipart([{ name: 'f', filename: 'f', content: 'x'.repeat(11) }]))).statusCode, 413);
    assert.equal((await inject(multipart([{ name: 'f', filename: 'f', content: 'x' }], { close: false }))).statusCode, 400);
  });
});

describe('multipart: a file cut short errors its stream', () => {
  test('the file stream the handler reads errors with a 400 KError', async (t) => {
    const seen = Promise.withResolvers<unknown>();
    const server = createServer((req, res) => {
      readBody(req, { kind: 'multipart', limit: LIMIT }).then(async (body) => {
        try {
          for await (const part of body as MultipartBody) if (part.kind === 'file') await digest(part.stream);
          seen.resolve(undefined);
        } catch (error) {
          seen.resolve(error);
        }
        res.end();
      }, seen.resolve);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    const whole = multipart([{ name: 'f', filename: 'f.bin', content: Buffer.alloc(10_000, 3) }]);
    const req = request({ host: '127.0.0.1', port, method: 'POST', headers: HEADERS, agent: false });
    req.on('error', () => {});
    req.on('response', (res) => res.resume());
    // the body ends (chunked, with its last chunk) in the middle of the file
    req.end(whole.subarray(0, 6000));
    const error = await seen.promise;
    assert.ok(error instanceof KError, String(error));
    assert.equal(error.status, 400);
  });
});

describe('multipart: a 20 MB file streams with steady memory', () => {
  test('RSS grows far less than the file while it is piped to a counting sink', async (t) => {
    const gc = exposeGc();
    const SIZE = 20 * 1024 * 1024;
    // after a full collection, and after the backing stores it freed are released (that happens off the main thread)
    const rss = async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return process.memoryUsage().rss;
    };
    let during = 0;
    const server = createServer((req, res) => {
      readBody(req, { kind: 'multipart', limit: 32 * 1024 * 1024 })
        .then(async (body) => {
          const sizes: number[] = [];
          for await (const part of body as MultipartBody) if (part.kind === 'file') sizes.push((await digest(part.stream)).size);
          // measured while the handler still holds everything it was given
          during = await rss();
          res.end(JSON.stringify(sizes));
        })
        .catch((error: unknown) => {
          res.statusCode = error instanceof KError ? error.status : 500;
          res.end(String(error));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="big"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const piece = Buffer.alloc(64 * 1024, 0x5a);
    // the client streams its 20 MB too: one 64 KiB piece, sent over and over
    async function* upload() {
      yield head;
      for (let sent = 0; sent < SIZE; sent += piece.length) yield piece;
      yield tail;
    }
    const before = await rss();
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          agent: false,
          headers: { ...HEADERS, 'content-length': head.length + SIZE + tail.length },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      Readable.from(upload()).pipe(req);
    });
    assert.equal(response.status, 200, response.body);
    assert.deepEqual(JSON.parse(response.body), [SIZE]);
    const growth = during - before;
    assert.ok(growth < 15 * 1024 * 1024, `RSS grew by ${(growth / 1048576).toFixed(1)} MB for a 20 MB file`);
  });
});

/** `global.gc`, exposed for this process if it is not already. */
function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing !== undefined) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
