import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { KError } from '../../errors/k-error.ts';
import { documentHook } from '../../utils/hook-docs.ts';
import type { Ctx } from '../core/ctx.ts';

/** Where a token's signature is checked: exactly one of them. */
export type JwtKey =
  /** A shared secret (HS256/384/512). */
  | { secret: string | Uint8Array; publicKey?: never; jwksUrl?: never }
  /** A public key, PEM (SPKI) or a `KeyObject` (RS*, PS*, ES*, EdDSA). */
  | { publicKey: string | KeyObject; secret?: never; jwksUrl?: never }
  /** An identity provider's JWKS (`https://id.example/.well-known/jwks.json`): fetched, cached 10 minutes, refetched for an unknown `kid` at most every `jwksRefreshMs`. */
  | { jwksUrl: string; secret?: never; publicKey?: never };

export type JwtAuthOptions = JwtKey & {
  /** The `iss` a token must carry (one of them). */
  issuer?: string | string[];
  /** The `aud` a token must carry (one of them). */
  audience?: string | string[];
  /** The accepted `alg`s; by default those of the key: HS256/384/512 for a secret, the asymmetric ones otherwise. `none` never is. */
  algorithms?: string[];
  /** Leeway for `exp` and `nbf`, in seconds (default 0). */
  clockToleranceS?: number;
  /** With `jwksUrl`: a token with an unknown `kid` refetches the set at most this often (default 30 s), so a flood of forged `kid`s cannot hammer the provider. */
  jwksRefreshMs?: number;
};

/** A `jwtAuth` hook, with a typed reader of the claims it verified. */
export interface JwtAuth<C extends object> {
  (ctx: Ctx): Promise<void>;
  /** The request's verified claims, typed `C` (throws when the hook did not run on this request). */
  claims(ctx: Ctx): C & JWTPayload;
}

const SYMMETRIC = ['HS256', 'HS384', 'HS512'];
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * Bearer-token authentication, an `onRequest` hook for the App, a group or a route: the
 * `Authorization: Bearer <JWT>` token is verified (jose: signature, `exp`, `nbf`, `iss`, `aud`,
 * the algorithm among `algorithms`: `alg: none` and an HS token checked against a public key are
 * refused) and its claims put on `ctx.auth`. A missing or bad token is a 401 problem with
 * `WWW-Authenticate: Bearer error="invalid_token"`; what was wrong is logged at debug level, never
 * told to the client.
 *
 * @example
 * const auth = jwtAuth<{ sub: string; scope: string }>({ jwksUrl: 'https://id.example/.well-known/jwks.json', issuer: 'https://id.example/', audience: 'books' });
 * const api = app.group('/api', { security: [{ bearer: [] }], onRequest: [auth] });
 * // in a handler: auth.claims(ctx).sub
 */
export function jwtAuth<C extends object = JWTPayload>(options: JwtAuthOptions): JwtAuth<C> {
  const symmetric = options.secret !== undefined;
  const algorithms = options.algorithms ?? (symmetric ? SYMMETRIC : ASYMMETRIC);
  if (algorithms.some((alg) => alg.toLowerCase() === 'none')) throw new TypeError('jwtAuth: `none` is not an algorithm a token may use');
  if (algorithms.some((alg) => SYMMETRIC.includes(alg)) !== symmetric) {
    throw new TypeError(`jwtAuth: algorithms ${algorithms.join(', ')} do not fit a ${symmetric ? 'secret' : 'public key'}`);
  }
  let verifier: Promise<(token: string) => Promise<JWTPayload>> | undefined;
  const verify = (token: string) => {
    verifier ??= makeVerifier(options, algorithms);
    return verifier.then((v) => v(token));
  };
  const hook = async (ctx: Ctx) => {
    const token = bearerToken(ctx.headers.authorization);
    if (token === undefined) throw unauthorized('a bearer token is required');
    try {
      ctx.auth = await verify(token);
    } catch (error) {
      ctx.logger.debug({ err: error }, 'bearer token refused');
      throw unauthorized('the bearer token is invalid or expired');
    }
  };
  // the routes it guards require the bearer scheme in the OpenAPI document
  return Object.assign(documentHook(hook, { bearer: true }), {
    claims(ctx: Ctx): C & JWTPayload {
      if (ctx.auth === undefined) throw new Error('jwtAuth: no verified token on this request (is the hook registered for its route?)');
      return ctx.auth as C & JWTPayload;
    },
  });
}

/** jose, loaded with the first token: an App without `jwtAuth` never loads it. */
async function makeVerifier(options: JwtAuthOptions, algorithms: string[]): Promise<(token: string) => Promise<JWTPayload>> {
  const jose = await import('jose');
  let key: Uint8Array | KeyObject | JWTVerifyGetKey;
  if (options.secret !== undefined) key = typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : options.secret;
  else if (options.publicKey !== undefined)
    key = typeof options.publicKey === 'string' ? createPublicKey(options.publicKey) : options.publicKey;
  else
    key = jose.createRemoteJWKSet(new URL(options.jwksUrl), {
      cooldownDuration: options.jwksRefreshMs ?? 30_000,
      cacheMaxAge: 600_000,
      timeoutDuration: 5_000,
    });
  const verifyOptions = {
    algorithms,
    clockTolerance: options.clockToleranceS ?? 0,
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  };
  return async (token) => (await jose.jwtVerify(token, key as Parameters<typeof jose.jwtVerify>[1], verifyOptions)).payload;
}

function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  return match?.[1];
}

function unauthorized(detail: string): KError {
  return KError.of('UNAUTHORIZED', detail, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
}
