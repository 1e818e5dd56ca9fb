import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { paginated } from '../../src/app/typed/paginated.ts';
import { KError } from '../../src/errors/k-error.ts';
import { controller, testApp } from '../helpers/app.ts';

const locales = resolve(import.meta.dirname, '../fixtures/locales');

function catalogueApp() {
  const { app } = testApp({ i18n: { directory: locales, defaultLocale: 'en' } });
  app.registerController(
    controller(
      { method: 'GET', path: '/hello', handler: (ctx) => ({ text: ctx.t('greeting', { name: 'Ada' }) }) },
      {
        method: 'GET',
        path: '/books/:id',
        handler: (ctx) => {
          throw KError.notFound(`book ${ctx.params['id']} does not exist`);
        },
      },
      { method: 'GET', path: '/taken', handler: () => Promise.reject(KError.conflict('this ISBN is taken')) },
      paginated({ method: 'GET', path: '/books', handler: (ctx) => ctx.parsePagination() }, { type: 'object' }),
      {
        method: 'POST',
        path: '/books',
        schema: { body: { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 3 } } } },
        handler: (ctx) => ctx.created(ctx.body),
      },
    ),
  );
  return app;
}

describe('translated responses from the configured catalogs', () => {
  test('ctx.t negotiates Accept-Language (q-values) and sets Content-Language', async () => {
    const app = catalogueApp();
    const fr = await app.inject({ url: '/hello', headers: { 'accept-language': 'de;q=1, fr;q=0.9, en;q=0.5' } });
    assert.deepEqual(fr.json(), { text: 'Bonjour Ada' });
    assert.equal(fr.headers['content-language'], 'fr');
    const fallback = await app.inject({ url: '/hello', headers: { 'accept-language': 'ja' } });
    assert.deepEqual(fallback.json(), { text: 'Hello Ada' });
    assert.equal(fallback.headers['content-language'], 'en');
  });

  test('a KError code with a catalog entry gets a translated detail; the problem stays RFC 9457', async () => {
    const app = catalogueApp();
    const res = await app.inject({ url: '/books/9', headers: { 'accept-language': 'fr-CA' } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers['content-language'], 'fr');
    const body = res.json();
    assert.equal(body.detail, 'Introuvable');
    assert.equal(body.code, 'NOT_FOUND');
    assert.equal(body.title, 'Not Found');
    for (const field of ['type', 'title', 'status', 'detail', 'instance', 'requestId']) assert.ok(field in body, field);
  });

  test('parameters come from the problem details', async () => {
    const app = catalogueApp();
    const res = await app.inject({ url: '/books?limit=abc', headers: { 'accept-language': 'fr' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().detail, 'Le paramètre limit doit être un entier positif');
  });

  test('validation messages are translated per issue', async () => {
    const app = catalogueApp();
    const missing = await app.inject({ method: 'POST', url: '/books', payload: {}, headers: { 'accept-language': 'fr' } });
    assert.equal(missing.json().details.errors[0].message, 'title est obligatoire');
    const short = await app.inject({ method: 'POST', url: '/books', payload: { title: 'x' }, headers: { 'accept-language': 'fr' } });
    assert.equal(short.json().details.errors[0].message, 'doit contenir au moins 3 caractères');
  });

  test('without a catalog entry the original message is kept and no Content-Language is claimed', async () => {
    const app = catalogueApp();
    const res = await app.inject({ url: '/taken', headers: { 'accept-language': 'fr' } });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().detail, 'this ISBN is taken');
    assert.equal(res.headers['content-language'], undefined);
  });

  test('a catalog entry may reuse the original detail', async () => {
    const app = catalogueApp();
    const res = await app.inject({ url: '/books/9', headers: { 'accept-language': 'en' } });
    assert.equal(res.json().detail, 'book 9 does not exist');
  });

  test('a missing catalog directory fails at construction, naming it', () => {
    assert.throws(() => testApp({ i18n: { directory: resolve(locales, 'nope'), defaultLocale: 'en' } }), /ENOENT|nope/);
  });
});
