import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crossOriginCheck, isUnsafe, normalizeOrigin } from '../../../src/app/headers/cross-origin.ts';
import { controller, testApp } from '../../helpers/app.ts';

describe('crossOriginCheck', () => {
  const refuse = crossOriginCheck(['https://admin.example']);
  const HOST = 'shop.example';

  test('only unsafe methods are checked', () => {
    assert.deepEqual(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'].map(isUnsafe), [
      false,
      false,
      false,
      true,
      true,
      true,
      true,
    ]);
  });

  test('Sec-Fetch-Site decides when a browser sends it', () => {
    assert.equal(refuse({ 'sec-fetch-site': 'same-origin', origin: 'https://shop.example' }, HOST), false);
    assert.equal(refuse({ 'sec-fetch-site': 'none' }, HOST), false, 'typed in the address bar, a bookmark');
    assert.equal(refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, HOST), true);
    assert.equal(
      refuse({ 'sec-fetch-site': 'same-site', origin: 'https://blog.shop.example' }, HOST),
      true,
      'a sibling subdomain is another origin',
    );
    assert.equal(refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://admin.example' }, HOST), false, 'a trusted origin');
    assert.equal(refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://ADMIN.example' }, HOST), false, 'origins compare without case');
  });

  test('without it, Origin against the host; with neither, no browser: pass', () => {
    assert.equal(refuse({ origin: 'https://shop.example' }, HOST), false);
    assert.equal(refuse({ origin: 'http://shop.example:8080' }, 'shop.example:8080'), false);
    assert.equal(refuse({ origin: 'https://evil.example' }, HOST), true);
    assert.equal(refuse({ origin: 'null' }, HOST), true, 'a sandboxed frame');
    assert.equal(refuse({}, HOST), false, 'curl, a server');
  });
});

describe('normalizeOrigin', () => {
  test('scheme and host lower-cased, a default port dropped, any other port kept: as a browser sends Origin', () => {
    assert.equal(normalizeOrigin('HTTPS://App.Example'), 'https://app.example');
    assert.equal(normalizeOrigin('https://app.example:443'), 'https://app.example');
    assert.equal(normalizeOrigin('http://App.Example:80'), 'http://app.example');
    assert.equal(normalizeOrigin('https://App.Example:8443'), 'https://app.example:8443');
    assert.equal(normalizeOrigin('null'), 'null');
    assert.equal(normalizeOrigin('https://[::1'), 'https://[::1', 'junk is only lower-cased');
  });

  test('a trusted origin configured with a default port or capitals matches what a browser sends', () => {
    const refuse = crossOriginCheck(['https://Admin.Example:443']);
    assert.equal(refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://admin.example' }, 'shop.example'), false);
    assert.equal(refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://admin.example:8443' }, 'shop.example'), true);
  });
});

describe('through the App', () => {
  const post = (headers: Record<string, string>) => ({
    method: 'POST' as const,
    url: '/orders',
    headers: { host: 'shop.example', ...headers },
  });
  const routes = controller(
    { method: 'POST', path: '/orders', handler: () => ({ ok: true }) },
    { method: 'GET', path: '/orders', handler: () => [] },
  );

  test('on by default: a cross-site form post is a 403 problem, the same-origin one passes', async () => {
    const { app } = testApp();
    app.registerController(routes);
    const refused = await app.inject(post({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }));
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.headers['content-type'], 'application/problem+json');
    assert.equal(refused.json().code, 'CROSS_ORIGIN_REQUEST');
    assert.equal((await app.inject(post({ 'sec-fetch-site': 'same-origin', origin: 'http://shop.example' }))).statusCode, 200);
    assert.equal((await app.inject(post({}))).statusCode, 200);
    assert.equal(
      (await app.inject({ url: '/orders', headers: { 'sec-fetch-site': 'cross-site' } })).statusCode,
      200,
      'a GET is never refused',
    );
  });

  test('csrf.trustedOrigins and the exact origins of cors.origins pass; csrf.enabled: false turns it off', async () => {
    const { app } = testApp({ csrf: { trustedOrigins: ['https://admin.example'] }, cors: { origins: ['https://app.example'] } });
    app.registerController(routes);
    for (const origin of ['https://admin.example', 'https://app.example']) {
      assert.equal((await app.inject(post({ 'sec-fetch-site': 'cross-site', origin }))).statusCode, 200, origin);
    }
    const off = testApp({ csrf: { enabled: false } }).app;
    off.registerController(routes);
    assert.equal((await off.inject(post({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }))).statusCode, 200);
  });

  test('behind a trusted proxy, the host the client asked for is compared', async () => {
    const { app } = testApp({ trustProxy: 1 });
    app.registerController(routes);
    const viaProxy = { host: 'svc.internal:3000', 'x-forwarded-host': 'shop.example', origin: 'https://shop.example' };
    assert.equal((await app.inject({ method: 'POST', url: '/orders', headers: viaProxy })).statusCode, 200);
  });
});
