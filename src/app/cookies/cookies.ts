import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCookie, type SetCookie, stringifySetCookie } from 'cookie';
import { createError } from '../../errors/flotilla-error.ts';
import type { CookieSigner } from './cookie-signer.ts';

/**
 * The attributes of a cookie `ctx.cookies.set` sends. Unless given, `path` is `/`, `httpOnly` true
 * and `sameSite` `lax`: a cookie set by a server is rarely for scripts to read, and `lax` keeps it
 * off cross-site subrequests and form posts.
 *
 * @example
 * ctx.cookies.set('session', id, { maxAge: 3600, secure: true, signed: true });
 */
export interface CookieOptions {
  /** Seconds until the cookie expires (`Max-Age`; `0` expires it at once), as the `cookie` package and Fastify count. */
  maxAge?: number;
  /** When the cookie expires (`Expires`); without it or `maxAge` it lasts the browser session. */
  expires?: Date;
  /** The paths the cookie is sent to (default `/`). */
  path?: string;
  /** The domain the cookie is sent to (and its subdomains); default: this host only. */
  domain?: string;
  /** Sent over HTTPS only (`Secure`); required by `sameSite: 'none'` and `partitioned`. */
  secure?: boolean;
  /** Hidden from scripts (`HttpOnly`, default true). */
  httpOnly?: boolean;
  /** `SameSite` (default `lax`); `true` is `strict`, `false` sends none. */
  sameSite?: 'strict' | 'lax' | 'none' | boolean;
  /** `Partitioned` (CHIPS): a third-party cookie kept per top-level site; requires `secure`. */
  partitioned?: boolean;
  /** `Priority` (Chrome). */
  priority?: 'low' | 'medium' | 'high';
  /** Sign the value with the first of `cookies.secrets` (read it back with `get(name, { signed: true })`). */
  signed?: boolean;
}

/** What `ctx.cookies.clear` needs to match the cookie it removes: the same path and domain (and `partitioned` for a partitioned one). */
export type ClearCookieOptions = Pick<CookieOptions, 'path' | 'domain' | 'secure' | 'httpOnly' | 'sameSite' | 'partitioned'>;

const EPOCH = new Date(0);

/**
 * The cookies of a request (`ctx.cookies`): its `Cookie` header parsed on the
 * first read only (a request that reads none pays nothing), and the cookies of
 * the response, each one `Set-Cookie` header, the last `set` of a name (on a
 * path and domain) replacing the earlier ones. Made on first use by `Ctx`.
 *
 * @example
 * const theme = ctx.cookies.get('theme');                       // plain, as the client sent it
 * const user = ctx.cookies.get('session', { signed: true });   // undefined when unsigned, tampered or malformed
 * ctx.cookies.set('session', user.id, { signed: true, maxAge: 86_400, secure: true });
 * ctx.cookies.clear('theme');
 */
export class Cookies {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #signer: CookieSigner | undefined;
  /** False once the request was answered without its handler (a handler timeout): what it sets is dropped. */
  readonly #writable: () => boolean;
  #parsed: Record<string, string | undefined> | undefined;
  /** The response's cookies by name, domain and path: a later `set` replaces an earlier one. */
  readonly #outgoing = new Map<string, string>();
  /** The `Set-Cookie` values this object wrote, told apart from those set with `ctx.setHeader`. */
  #written = new Set<string>();

  constructor(req: IncomingMessage, res: ServerResponse, signer: CookieSigner | undefined, writable: () => boolean) {
    this.#req = req;
    this.#res = res;
    this.#signer = signer;
    this.#writable = writable;
  }

  /**
   * The value of the request's cookie `name` (percent-decoded), `undefined` when it has none. With
   * `signed: true`, the value it was signed with when one of `cookies.secrets` signed it, and
   * `undefined` when it is unsigned, tampered with, or signed with a secret no longer configured.
   */
  get(name: string, options?: { signed?: boolean }): string | undefined {
    const raw = this.all()[name];
    if (options?.signed !== true) return raw;
    const signer = this.#signerFor('get', name);
    return raw === undefined ? undefined : signer.unsign(raw);
  }

  /** Every cookie of the request by name, as sent (signed ones with their signature); parsed once. */
  all(): Readonly<Record<string, string | undefined>> {
    if (this.#parsed === undefined) {
      const header = this.#req.headers.cookie;
      this.#parsed = header === undefined || header === '' ? {} : parseCookie(header);
    }
    return this.#parsed;
  }

  /** Sends the cookie `name` with the response (one `Set-Cookie` header each; see {@link CookieOptions}). */
  set(name: string, value: string, options: CookieOptions = {}): void {
    const { signed, ...attributes } = options;
    const cookie: SetCookie = { path: '/', httpOnly: true, sameSite: 'lax', ...attributes, name, value };
    if (signed === true) cookie.value = this.#signerFor('set', name).sign(value);
    if ((cookie.sameSite === 'none' || cookie.partitioned === true) && cookie.secure !== true) {
      const what = cookie.partitioned === true ? 'partitioned' : "sameSite: 'none'";
      throw createError('FLO_ERR_BAD_COOKIE', { name, reason: `${what} requires secure: true (browsers drop it otherwise)` });
    }
    let header: string;
    try {
      header = stringifySetCookie(cookie);
    } catch (error) {
      throw createError('FLO_ERR_BAD_COOKIE', { name, reason: (error as Error).message }, { cause: error });
    }
    if (!this.#writable()) return;
    this.#outgoing.set(`${name};${cookie.domain ?? ''};${cookie.path ?? ''}`, header);
    this.#write();
  }

  /** Removes the client's cookie `name`: an empty value that expired in 1970, on the same path and domain. */
  clear(name: string, options: ClearCookieOptions = {}): void {
    this.set(name, '', { ...options, expires: EPOCH });
  }

  #write(): void {
    const current = this.#res.getHeader('set-cookie');
    const others = (current === undefined ? [] : Array.isArray(current) ? current : [String(current)]).filter((v) => !this.#written.has(v));
    const ours = [...this.#outgoing.values()];
    this.#written = new Set(ours);
    this.#res.setHeader('Set-Cookie', [...others, ...ours]);
  }

  #signerFor(method: 'get' | 'set', name: string): CookieSigner {
    if (this.#signer === undefined) throw createError('FLO_ERR_NO_COOKIE_SECRETS', { method, name });
    return this.#signer;
  }
}
