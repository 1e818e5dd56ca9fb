import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { negotiateLocale, type Translator } from '../../src/i18n/translator.ts';
import { controller, testApp } from '../helpers/app.ts';

const catalogs: Record<string, Record<string, string>> = {
  en: { greeting: 'Hello, {name}' },
  fr: { greeting: 'Bonjour, {name}' },
  'pt-BR': { greeting: 'Olá, {name}' },
};
const translator: Translator = {
  locales: () => Object.keys(catalogs),
  t: (locale, key, params) => (catalogs[locale]?.[key] ?? key).replace('{name}', String(params?.['name'] ?? '')),
};

describe('negotiateLocale', () => {
  const available = ['en', 'fr', 'pt-BR'];

  test('picks the highest q-value the translator has', () => {
    assert.equal(negotiateLocale('fr;q=0.5, en;q=0.9', available), 'en');
    assert.equal(negotiateLocale('de, fr;q=0.8, en;q=0.1', available), 'fr');
    assert.equal(negotiateLocale('pt-BR', available), 'pt-BR');
  });

  test('equal q-values keep the header order', () => {
    assert.equal(negotiateLocale('fr, en', available), 'fr');
    assert.equal(negotiateLocale('en;q=0.7, fr;q=0.7', available), 'en');
  });

  test('a regional tag falls back to its language, and a language to a regional locale', () => {
    assert.equal(negotiateLocale('fr-CA', available), 'fr');
    assert.equal(negotiateLocale('pt', available), 'pt-BR');
    assert.equal(negotiateLocale('PT-br', available), 'pt-BR');
  });

  test('a regional tag prefers its language to another region of it, which is still better than another language', () => {
    assert.equal(negotiateLocale('en-US', ['en-GB', 'en', 'fr']), 'en');
    assert.equal(negotiateLocale('en-us', ['fr', 'en-GB', 'EN']), 'EN');
    assert.equal(negotiateLocale('en-US', ['fr', 'en-GB']), 'en-GB');
    assert.equal(negotiateLocale('en-US', ['en-GB', 'en-US', 'en']), 'en-US', 'the same tag first');
  });

  test('q-values rank the ranges before how closely a locale matches one', () => {
    // the browser's usual header: the region, then its language a little lower
    assert.equal(negotiateLocale('en-US,en;q=0.9', ['fr', 'en-GB', 'en']), 'en');
    assert.equal(negotiateLocale('en-US,en;q=0.9', ['fr', 'en-GB']), 'en-GB');
    assert.equal(negotiateLocale('fr;q=0.4, en-US;q=0.8', ['fr', 'en-GB', 'en']), 'en');
    assert.equal(negotiateLocale('fr-CA;q=0.9, en-US;q=0.8', ['en', 'fr-FR']), 'fr-FR');
    assert.equal(negotiateLocale('de;q=0.9, en-US;q=0, en;q=0.1', ['en-US', 'en']), 'en', 'q=0 refuses that tag only');
    assert.equal(negotiateLocale('*;q=0.1, fr', ['en', 'pt-BR']), 'en', 'the wildcard: the first locale');
  });

  test('q=0 means "not this one"', () => {
    assert.equal(negotiateLocale('fr;q=0, en;q=0.1', available), 'en');
  });

  test('falls back to the first locale when nothing matches, the header is missing or malformed', () => {
    for (const header of [undefined, '', 'de, ja', '*', ';;;,,', 'fr;q=abc'])
      assert.equal(negotiateLocale(header, available), 'en', header);
  });

  test('no locales: undefined', () => {
    assert.equal(negotiateLocale('en', []), undefined);
  });
});

describe('ctx.t', () => {
  test('translates into the negotiated locale and sets Content-Language', async () => {
    const { app } = testApp();
    app.setTranslator(translator);
    app.registerController(
      controller({ method: 'GET', path: '/hi', handler: (ctx) => ({ text: ctx.t('greeting', { name: 'Ada' }), locale: ctx.locale }) }),
    );
    const fr = await app.inject({ url: '/hi', headers: { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.8' } });
    assert.deepEqual(fr.json(), { text: 'Bonjour, Ada', locale: 'fr' });
    assert.equal(fr.headers['content-language'], 'fr');
    const fallback = await app.inject({ url: '/hi', headers: { 'accept-language': 'de' } });
    assert.deepEqual(fallback.json(), { text: 'Hello, Ada', locale: 'en' });
    assert.equal(fallback.headers['content-language'], 'en');
  });

  test('without a translator, returns the key and sets no Content-Language', async () => {
    const { app } = testApp();
    app.registerController(
      controller({ method: 'GET', path: '/hi', handler: (ctx) => ({ text: ctx.t('greeting'), locale: ctx.locale ?? null }) }),
    );
    const res = await app.inject({ url: '/hi', headers: { 'accept-language': 'fr' } });
    assert.deepEqual(res.json(), { text: 'greeting', locale: null });
    assert.equal(res.headers['content-language'], undefined);
  });

  test('a translator set after the routes still applies', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/hi', handler: (ctx) => ctx.t('greeting', { name: 'Bo' }) }));
    assert.equal((await app.inject('/hi')).json(), 'greeting');
    app.setTranslator(translator);
    assert.equal((await app.inject({ url: '/hi', headers: { 'accept-language': 'pt' } })).json(), 'Olá, Bo');
  });
});
