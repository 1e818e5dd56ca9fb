import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from 'jose';
import { jwtAuth } from '../../../src/index.ts';
import { controller, testApp } from '../../helpers/app.ts';

/** A local identity provider: its JWKS over real HTTP, the keys it serves changeable (a rotation). */
let jwks: JWK[] = [];
let fetches = 0;
const idp = createServer((_req, res) => {
  fetches++;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ keys: jwks }));
});
let jwksUrl: string;

type Keys = Awaited<ReturnType<typeof generateKeyPair>>;
let first: Keys;
let second: Keys;

before(async () => {
  first = await generateKeyPair('RS256', { extractable: true });
  second = await generateKeyPair('ES256', { extractable: true });
  jwks = [{ ...(await exportJWK(first.publicKey)), kid: 'one', alg: 'RS256', use: 'sig' }];
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json`;
});
after(() => idp.close());

const ISSUER = 'https://id.example/';
function token(
  key: Keys['privateKey'] | Uint8Array,
  alg: string,
  kid: string | undefined,
  claims: Record<string, unknown> = {},
  expires = '5m',
) {
  const jwt = new SignJWT({ scope: 'books:write', ...claims }).setProtectedHeader(kid === undefined ? { alg } : { alg, kid });
  return jwt.setSubject('ann').setIssuer(ISSUER).setAudience('books').setIssuedAt().setExpirationTime(expires).sign(key);
}

function appWith(auth: ReturnType<typeof jwtAuth<{ scope: string }>>) {
  const { app } = testApp();
  app.registerController(
    controller({
      method: 'GET',
      path: '/me',
      onRequest: [auth],
      handler: (ctx) => ({ sub: auth.claims(ctx).sub, scope: auth.claims(ctx).scope }),
    }),
  );
  return (bearer?: string) => app.inject({ url: '/me', headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } });
}

describe('jwtAuth with a JWKS', () => {
  test('a valid token: 200 and its claims; missing, expired, wrong audience or issuer, alg none: 401', async () => {
    const get = appWith(jwtAuth<{ scope: string }>({ jwksUrl, issuer: ISSUER, audience: 'books', jwksRefreshMs: 0 }));
    const ok = await get(await token(first.privateKey, 'RS256', 'one'));
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json(), { sub: 'ann', scope: 'books:write' });

    const missing = await get();
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="a bearer token is required"');
    assert.equal(missing.json().code, 'UNAUTHORIZED');

    const expired = await token(first.privateKey, 'RS256', 'one', {}, '-1m');
    const wrongAudience = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'one' })
      .setIssuer(ISSUER)
      .setAudience('other')
      .setExpirationTime('5m')
      .sign(first.privateKey);
    const wrongIssuer = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'one' })
      .setIssuer('https://evil.example/')
      .setAudience('books')
      .setExpirationTime('5m')
      .sign(first.privateKey);
    const none = new UnsecuredJWT({ sub: 'ann' }).setIssuer(ISSUER).setAudience('books').setExpirationTime('5m').encode();
    for (const [what, bad] of Object.entries({ expired, wrongAudience, wrongIssuer, none, garbage: 'not.a.token' })) {
      const res = await get(bad);
      assert.equal(res.statusCode, 401, what);
      assert.equal(
        res.headers['www-authenticate'],
        'Bearer error="invalid_token", error_description="the bearer token is invalid or expired"',
        what,
      );
      assert.equal(res.json().detail, 'the bearer token is invalid or expired', `${what}: the reason stays in the server's log`);
    }
  });

  test('an unknown kid refetches the set: a rotated key is picked up; a forged kid is still refused', async () => {
    const get = appWith(jwtAuth<{ scope: string }>({ jwksUrl, issuer: ISSUER, audience: 'books', jwksRefreshMs: 0 }));
    assert.equal((await get(await token(first.privateKey, 'RS256', 'one'))).statusCode, 200);
    jwks = [...jwks, { ...(await exportJWK(second.publicKey)), kid: 'two', alg: 'ES256', use: 'sig' }];
    const before = fetches;
    assert.equal((await get(await token(second.privateKey, 'ES256', 'two'))).statusCode, 200);
    assert.ok(fetches > before, 'fetched again for the new kid');
    const forged = await generateKeyPair('ES256');
    assert.equal((await get(await token(forged.privateKey, 'ES256', 'two'))).statusCode, 401);
  });
});

describe('jwtAuth with a key of its own', () => {
  test('a public key: an HS256 token signed with that key as the secret (algorithm confusion) is refused', async () => {
    const pem = await exportSPKI(first.publicKey);
    const get = appWith(jwtAuth<{ scope: string }>({ publicKey: pem, issuer: ISSUER, audience: 'books' }));
    assert.equal((await get(await token(first.privateKey, 'RS256', undefined))).statusCode, 200);
    const confused = await token(new TextEncoder().encode(pem), 'HS256', undefined);
    assert.equal((await get(confused)).statusCode, 401);
  });

  test('a secret: HS256 tokens; clock tolerance; refusing none and misfit algorithms at creation', async () => {
    const secret = 'a secret of at least thirty-two characters!';
    const get = appWith(jwtAuth<{ scope: string }>({ secret, audience: 'books', clockToleranceS: 120 }));
    assert.equal(
      (await get(await token(new TextEncoder().encode(secret), 'HS256', undefined, {}, '-1m'))).statusCode,
      200,
      'within the tolerance',
    );
    assert.throws(() => jwtAuth({ secret, algorithms: ['none'] }), { code: 'FLO_ERR_BAD_JWT_OPTION', message: /none/ });
    assert.throws(() => jwtAuth({ secret, algorithms: ['RS256'] }), { code: 'FLO_ERR_BAD_JWT_OPTION', message: /do not fit a secret/ });
    assert.throws(() => jwtAuth({ jwksUrl: 'https://id.example/jwks', algorithms: ['HS256'] }), {
      code: 'FLO_ERR_BAD_JWT_OPTION',
      message: /do not fit a public key/,
    });
  });

  test('an HMAC secret shorter than 32 bytes throws FLO_ERR_BAD_JWT_OPTION when the hook is made', () => {
    for (const secret of ['x', 'a'.repeat(31), new Uint8Array(16)]) {
      assert.throws(
        () => jwtAuth({ secret }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'FLO_ERR_BAD_JWT_OPTION');
          assert.ok(error instanceof TypeError);
          assert.match(error.message, /at least 32/);
          return true;
        },
      );
    }
    // bytes, not characters: 16 two-byte characters are 32 bytes
    for (const secret of ['a'.repeat(32), 'é'.repeat(16), new Uint8Array(32)]) assert.doesNotThrow(() => jwtAuth({ secret }));
  });
});

describe('jwtAuth and time', () => {
  const SECRET = 'a secret of at least thirty-two characters!';
  const key = new TextEncoder().encode(SECRET);
  const now = () => Math.floor(Date.now() / 1000);
  /** An HS256 token with exactly these time claims (none added). */
  const signed = (claims: { exp?: number; iat?: number; nbf?: number }) =>
    new SignJWT({ scope: 'books:read', ...claims }).setProtectedHeader({ alg: 'HS256' }).setSubject('ann').sign(key);

  test('a token without exp is refused, unless requireExp: false', async () => {
    const strict = appWith(jwtAuth<{ scope: string }>({ secret: SECRET }));
    const forever = await signed({ iat: now() });
    const refused = await strict(forever);
    assert.equal(refused.statusCode, 401);
    assert.equal(
      refused.headers['www-authenticate'],
      'Bearer error="invalid_token", error_description="the bearer token is invalid or expired"',
    );
    assert.equal(refused.json().detail, 'the bearer token is invalid or expired');
    assert.equal((await strict(await signed({ iat: now(), exp: now() + 300 }))).statusCode, 200);

    const lenient = appWith(jwtAuth<{ scope: string }>({ secret: SECRET, requireExp: false }));
    const accepted = await lenient(forever);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.deepEqual(accepted.json(), { sub: 'ann', scope: 'books:read' });
    assert.equal((await lenient(await signed({ exp: now() - 60 }))).statusCode, 401, 'an exp it carries still counts');
  });

  test('issued or valid only in the future (iat, nbf beyond clockToleranceS): 401; within the tolerance: 200', async () => {
    const get = appWith(jwtAuth<{ scope: string }>({ secret: SECRET, clockToleranceS: 120 }));
    const exp = now() + 7200;
    const cases = {
      'iat an hour ahead': [{ iat: now() + 3600, exp }, 401],
      'nbf an hour ahead': [{ iat: now(), nbf: now() + 3600, exp }, 401],
      'iat a minute ahead (a skewed clock)': [{ iat: now() + 60, exp }, 200],
      'nbf a minute ahead (a skewed clock)': [{ iat: now(), nbf: now() + 60, exp }, 200],
      'iat and nbf now': [{ iat: now(), nbf: now(), exp }, 200],
    } as const;
    for (const [what, [claims, status]] of Object.entries(cases)) {
      const res = await get(await signed(claims));
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
    }
    const exact = appWith(jwtAuth<{ scope: string }>({ secret: SECRET }));
    assert.equal((await exact(await signed({ iat: now() + 60, exp }))).statusCode, 401, 'no tolerance by default');
  });
});
