import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { createError } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { documentHook } from '../../utils/hook-docs.ts';
import type { Ctx } from '../core/ctx.ts';

/** Where a token's signature is checked: exactly one of them. */
export type JwtKey =
  /** A shared secret (HS256/384/512) of at least 32 bytes (a string counts its UTF-8 bytes). */
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
  /** Leeway for `exp`, `nbf` and `iat`, in seconds (default 0): how far the clocks of issuer and server may disagree. */
  clockToleranceS?: number;
  /** Whether a token must carry `exp` (default true): one without it would be accepted forever. `false` only for an issuer that never sets it. */
  requireExp?: boolean;
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
/** The shortest HMAC secret taken, in bytes: HS256's output size (RFC 7518 §3.2), the length cookie secrets need too. */
const MIN_SECRET_BYTES = 32;
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * Bearer-token authentication, an `onRequest` hook for the App, a group or a route: the
 * `Authorization: Bearer <JWT>` token is verified (jose: signature, `exp` — required unless
 * `requireExp: false` —, `nbf`, `iss`, `aud`, the algorithm among `algorithms`: `alg: none` and an HS
 * token checked against a public key are refused; and an `iat` in the future, beyond
 * `clockToleranceS`) and its claims put on `ctx.auth`. A missing or bad token is a 401 problem with
 * `WWW-Authenticate: Bearer error="invalid_token"` and a fixed `error_description`; what was wrong
 * is logged at debug level, never told to the client. Options that cannot be safe (an HMAC `secret`
 * shorter than 32 bytes, `none` among the algorithms, algorithms that do not fit the key) throw
 * `FLO_ERR_BAD_JWT_OPTION` when the hook is made.
 *
 * @example
 * const auth = jwtAuth<{ sub: string; scope: string }>({ jwksUrl: 'https://id.example/.well-known/jwks.json', issuer: 'https://id.example/', audience: 'books' });
 * const api = app.group('/api', { security: [{ bearer: [] }], onRequest: [auth] });
 * // in a handler: auth.claims(ctx).sub
 */
export function jwtAuth<C extends object = JWTPayload>(options: JwtAuthOptions): JwtAuth<C> {
  const symmetric = options.secret !== undefined;
  if (symmetric) checkSecret(options.secret);
  const algorithms = options.algorithms ?? (symmetric ? SYMMETRIC : ASYMMETRIC);
  if (algorithms.some((alg) => alg.toLowerCase() === 'none'))
    throw createError('FLO_ERR_BAD_JWT_OPTION', { reason: '`none` is not an algorithm a token may use' });
  if (algorithms.some((alg) => SYMMETRIC.includes(alg)) !== symmetric) {
    const reason = `algorithms ${algorithms.join(', ')} do not fit a ${symmetric ? 'secret' : 'public key'}`;
    throw createError('FLO_ERR_BAD_JWT_OPTION', { reason });
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

/** An HMAC secret as short as a password can be guessed offline from one token: refused. */
function checkSecret(secret: unknown): void {
  const bytes =
    typeof secret === 'string' ? Buffer.byteLength(secret, 'utf8') : secret instanceof Uint8Array ? secret.byteLength : undefined;
  if (bytes === undefined) throw createError('FLO_ERR_BAD_JWT_OPTION', { reason: 'secret must be a string or a Uint8Array' });
  if (bytes < MIN_SECRET_BYTES)
    throw createError('FLO_ERR_BAD_JWT_OPTION', {
      reason: `secret is ${bytes} bytes, an HMAC secret needs at least ${MIN_SECRET_BYTES} (random, e.g. openssl rand -base64 32)`,
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
  const tolerance = options.clockToleranceS ?? 0;
  const verifyOptions = {
    algorithms,
    clockTolerance: tolerance,
    ...(options.requireExp === false ? {} : { requiredClaims: ['exp'] }),
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  };
  return async (token) => {
    const { payload } = await jose.jwtVerify(token, key as Parameters<typeof jose.jwtVerify>[1], verifyOptions);
    // jose checks `iat` only against a maximum age: a token issued in the future is refused here
    if (payload.iat !== undefined && payload.iat > Date.now() / 1000 + tolerance)
      throw new Error('"iat" claim timestamp check failed (issued in the future)');
    return payload;
  };
}

function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  return match?.[1];
}

/** A 401 whose `WWW-Authenticate` (RFC 6750 §3) says only what the problem's detail says: a fixed text, no reason of jose's. */
function unauthorized(detail: string): KError {
  const challenge = `Bearer error="invalid_token", error_description="${detail}"`;
  return KError.of('UNAUTHORIZED', detail, { headers: { 'WWW-Authenticate': challenge } });
}
