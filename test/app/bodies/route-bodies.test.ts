import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { MultipartBody } from '../../../src/app/bodies/index.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { Route } from '../../../src/app/core/route.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const SECRET = 'whsec_test';

/** The webhook example: the exact bytes, and an HMAC over them checked in constant time. */
function verifySignature(ctx: Ctx): void {
  const body = ctx.body as Buffer;
  const expected = createHmac('sha256', SECRET).update(body).digest();
  const given = Buffer.from(String(ctx.headers['x-signature'] ?? ''), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw KError.unauthorized('bad signature');
}

const routes: Route[] = [
  {
    method: 'POST',
    path: '/webhook',
    body: 'raw',
    mediaTypes: ['application/json'],
    handler: (ctx) => {
      verifySignature(ctx);
      return { verified: true, bytes: (ctx.body as Buffer).length };
    },
  },
  { method: 'POST', path: '/notes', body: 'text', handler: (ctx) => ({ text: ctx.body }) },
  {
    method: 'POST',
    path: '/subscribe',
    body: 'form',
    schema: {
      body: {
        type: 'object',
        properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer' } },
        required: ['email'],
      },
    },
    handler: (ctx) => ctx.body,
  },
  {
    method: 'POST',
    path: '/upload',
    body: 'multipart',
    multipart: { files: 1 },
    handler: async (ctx) => {
      const seen: string[] = [];
      for await (const part of ctx.body as MultipartBody) {
        if (part.kind === 'field') seen.push(`${part.name}=${part.value}`);
        else {
          let bytes = 0;
          for await (const chunk of part.stream) bytes += (chunk as Buffer).length;
          seen.push(`${part.filename}:${bytes}`);
        }
      }
      return { seen };
    },
  },
  {
    method: 'POST',
    path: '/stream',
    body: 'stream',
    bodyLimit: 1024,
    handler: async (ctx) => ({ bytes: Buffer.concat(await (ctx.body as Readable).toArray()).length }),
  },
];

function multipart(boundary: string, parts: { name: string; filename?: string; value: string }[]): string {
  let out = '';
  for (const p of parts) {
    out += `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n`;
    if (p.filename) out += 'Content-Type: application/octet-stream\r\n';
    out += `\r\n${p.value}\r\n`;
  }
  return `${out}--${boundary}--\r\n`;
}

describe('route body kinds', () => {
  test('raw: the exact bytes, and the HMAC example verifies', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller(...routes));
    const payload = '{"event":"paid", "amount": 100 }\n';
    const signature = createHmac('sha256', SECRET).update(payload).digest('hex');
    const ok = await app.inject({
      method: 'POST',
      url: '/webhook',
      payload,
      headers: { 'content-type': 'application/json', 'x-signature': signature },
    });
    t.assert.deepStrictEqual(ok.json(), { verified: true, bytes: Buffer.byteLength(payload) });
    const tampered = await app.inject({
      method: 'POST',
      url: '/webhook',
      payload: payload.replace('100', '999'),
      headers: { 'content-type': 'application/json', 'x-signature': signature },
    });
    t.assert.strictEqual(tampered.statusCode, 401);
    const wrongType = await app.inject({
      method: 'POST',
      url: '/webhook',
      payload,
      headers: { 'content-type': 'text/plain', 'x-signature': signature },
    });
    t.assert.strictEqual(wrongType.statusCode, 415);
    await app.close();
  });

  test('text and form: decoded, validated by the body schema (coerced), __proto__ refused', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller(...routes));
    const text = await app.inject({
      method: 'POST',
      url: '/notes',
      payload: Buffer.from('café', 'latin1'),
      headers: { 'content-type': 'text/plain; charset=latin1' },
    });
    t.assert.deepStrictEqual(text.json(), { text: 'café' });
    const form = await app.inject({
      method: 'POST',
      url: '/subscribe',
      payload: 'email=a%40b.io&age=42',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.assert.deepStrictEqual(form.json(), { email: 'a@b.io', age: 42 });
    const invalid = await app.inject({
      method: 'POST',
      url: '/subscribe',
      payload: 'age=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.assert.strictEqual(invalid.statusCode, 400);
    t.assert.strictEqual(invalid.json().code, 'VALIDATION_FAILED');
    const polluted = await app.inject({
      method: 'POST',
      url: '/subscribe',
      payload: 'email=a%40b.io&__proto__[admin]=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.assert.strictEqual(polluted.statusCode, 400);
    await app.close();
  });

  test('multipart: parts streamed to the handler; too many files is 413; a truncated body 400', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller(...routes));
    const type = 'multipart/form-data; boundary=XyZ';
    const body = multipart('XyZ', [
      { name: 'title', value: 'cv' },
      { name: 'file', filename: 'cv.pdf', value: 'x'.repeat(3000) },
    ]);
    const ok = await app.inject({ method: 'POST', url: '/upload', payload: body, headers: { 'content-type': type } });
    t.assert.deepStrictEqual(ok.json(), { seen: ['title=cv', 'cv.pdf:3000'] });
    const two = multipart('XyZ', [
      { name: 'a', filename: 'a.txt', value: 'a' },
      { name: 'b', filename: 'b.txt', value: 'b' },
    ]);
    t.assert.strictEqual(
      (await app.inject({ method: 'POST', url: '/upload', payload: two, headers: { 'content-type': type } })).statusCode,
      413,
    );
    const truncated = body.slice(0, body.length - 20);
    t.assert.strictEqual(
      (await app.inject({ method: 'POST', url: '/upload', payload: truncated, headers: { 'content-type': type } })).statusCode,
      400,
    );
    await app.close();
  });

  test('each kind keeps its limit (413) and a wrong content type stays 415', async (t: TestContext) => {
    const { app } = testApp({ limits: { bodyBytes: 64 } });
    app.registerController(controller(...routes));
    const big = 'x'.repeat(2048);
    for (const [url, type] of [
      ['/notes', 'text/plain'],
      ['/subscribe', 'application/x-www-form-urlencoded'],
      ['/webhook', 'application/json'],
      ['/stream', 'application/octet-stream'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url, payload: `email=${big}`, headers: { 'content-type': type } });
      t.assert.strictEqual(res.statusCode, 413, url);
    }
    const wrong = await app.inject({ method: 'POST', url: '/subscribe', payload: '{}', headers: { 'content-type': 'application/json' } });
    t.assert.strictEqual(wrong.statusCode, 415);
    await app.close();
  });

  test('a malformed body option is refused at registration', (t: TestContext) => {
    const { app } = testApp();
    const bad = (route: Partial<Route>) => () =>
      app.registerController(controller({ method: 'POST', path: '/x', handler: () => 1, ...route }));
    t.assert.throws(bad({ body: 'xml' as never }), { code: 'FLO_ERR_BAD_BODY_OPTION', message: /body must be one of/ });
    t.assert.throws(bad({ body: 'multipart', multipart: { files: -1 } }), { code: 'FLO_ERR_BAD_BODY_OPTION', message: /multipart.files/ });
    t.assert.throws(bad({ body: 'text', schema: { body: { type: 'string' } } }), {
      code: 'FLO_ERR_BAD_BODY_OPTION',
      message: /schema.body/,
    });
    t.assert.throws(bad({ body: 'raw', mediaTypes: ['json'] }), { code: 'FLO_ERR_BAD_BODY_OPTION', message: /mediaTypes/ });
    // read by the parser the bodies use: a bare type/subtype, no parameters
    for (const type of ['application/json; charset=utf-8', 'text/ plain', '', ' text/plain']) {
      t.assert.throws(bad({ body: 'raw', mediaTypes: [type] }), { code: 'FLO_ERR_BAD_BODY_OPTION', message: /mediaTypes/ }, type);
    }
    for (const [i, type] of ['Text/*', '*/*', 'application/vnd.api+json'].entries()) {
      t.assert.doesNotThrow(bad({ path: `/ok${i}`, body: 'stream', mediaTypes: [type] }), type);
    }
  });

  test('the OpenAPI document shows each body with its media types, an SSE route as text/event-stream, and validates', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller(...routes, { method: 'GET', path: '/feed', kind: 'sse', handler: (ctx) => ctx.sse((async function* () {})()) }),
    );
    const doc = app.openapi();
    const content = (path: string) => Object.keys((doc.paths[path]?.post?.requestBody as { content: object } | undefined)?.content ?? {});
    t.assert.deepStrictEqual(content('/webhook'), ['application/json']);
    t.assert.deepStrictEqual(content('/notes'), ['text/plain']);
    t.assert.deepStrictEqual(content('/subscribe'), ['application/x-www-form-urlencoded']);
    t.assert.deepStrictEqual(content('/upload'), ['multipart/form-data']);
    t.assert.deepStrictEqual(content('/stream'), ['application/octet-stream']);
    t.assert.deepStrictEqual(Object.keys(doc.paths['/feed']?.get?.responses['200']?.content ?? {}), ['text/event-stream']);
    await SwaggerParser.validate(structuredClone(doc) as never);
    await app.close();
  });
});
