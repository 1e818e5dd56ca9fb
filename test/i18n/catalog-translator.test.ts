import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { CatalogTranslator } from '../../src/i18n/catalog-translator.ts';

const locales = resolve(import.meta.dirname, '../fixtures/locales');

test('loads YAML and JSON catalogs, fallback locale first', (t) => {
  const translator = CatalogTranslator.fromDirectory(locales, 'en');
  t.assert.deepEqual(translator.locales(), ['en', 'fr']);
  t.assert.equal(translator.t('fr', 'greeting', { name: 'Ada' }), 'Bonjour Ada');
  t.assert.equal(translator.t('en', 'greeting', { name: 'Ada' }), 'Hello Ada');
});

test('nested keys flatten to dotted keys', (t) => {
  const translator = CatalogTranslator.fromDirectory(locales, 'en');
  t.assert.equal(translator.t('fr', 'errors.NOT_FOUND'), 'Introuvable');
});

test('a key missing in the locale falls back to the fallback locale, then to the key', (t) => {
  const translator = new CatalogTranslator({ en: { a: 'A', b: 'B' }, fr: { a: 'à' } }, 'en');
  t.assert.equal(translator.t('fr', 'b'), 'B');
  t.assert.equal(translator.t('fr', 'zzz'), 'zzz');
  t.assert.equal(translator.t('de', 'a'), 'A', 'an unknown locale uses the fallback');
  t.assert.equal(translator.has('fr', 'b'), true);
  t.assert.equal(translator.has('fr', 'zzz'), false);
});

test('parameters: known ones are replaced, unknown ones stay, inherited properties are ignored', (t) => {
  const translator = new CatalogTranslator({ en: { m: '{a} and {b} and {toString}' } }, 'en');
  t.assert.equal(translator.t('en', 'm', { a: 1 }), '1 and {b} and {toString}');
});

test('bad catalogs are refused with the file named', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-locales-'));
  writeFileSync(join(dir, 'en.yaml'), 'a: [1, 2]\n');
  t.assert.throws(() => CatalogTranslator.fromDirectory(dir, 'en'), /'a' must be a string or a mapping/);
  t.assert.throws(() => new CatalogTranslator({ fr: {} }, 'en'), /fallback locale 'en' has no catalog/);
  const bad = mkdtempSync(join(tmpdir(), 'flotilla-locales-'));
  writeFileSync(join(bad, 'not a locale.json'), '{}');
  t.assert.throws(() => CatalogTranslator.fromDirectory(bad, 'en'), /is not a locale tag/);
});
