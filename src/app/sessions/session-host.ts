import type { SessionStore } from '../../coordination/session-store.ts';
import { createError } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import type { Cookies } from '../cookies/cookies.ts';
import { RequestSession } from './session.ts';

/** A session is saved again to extend its expiry once this share of `sessions.ttlMs` has passed since the last save. */
const TOUCH_AFTER = 0.1;

/** An id as `newSessionId` makes them (a cookie with anything else is not looked up). */
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;

/**
 * What an App's requests need for `ctx.session()` (docs/guides/sessions.md): the store (opened on
 * the first use: a service without sessions has none) and `sessions.*`.
 */
export interface SessionHost {
  readonly store: () => SessionStore;
  readonly ttlMs: number;
  readonly cookieName: string;
  readonly maxBytes: number;
  /** Cookies are `Secure` whatever the request's protocol (outside development). */
  readonly alwaysSecure: boolean;
}

/** What sessions read of a request: its cookies, and whether it came over HTTPS (a `Ctx`). */
export interface SessionRequest {
  readonly cookies: Cookies;
  readonly protocol: string;
}

/**
 * The request's session: its cookie's id (verified with `cookies.secrets`) looked up in the store,
 * or a new, empty session when it has none, or one the store does not know.
 *
 * @example
 * const session = await loadSession(host, ctx); // what `ctx.session()` resolves to
 */
export async function loadSession(host: SessionHost, ctx: SessionRequest): Promise<RequestSession> {
  const raw = ctx.cookies.get(host.cookieName);
  if (raw === undefined) return new RequestSession(undefined);
  const id = ctx.cookies.get(host.cookieName, { signed: true });
  if (id === undefined || !SESSION_ID.test(id)) return new RequestSession(undefined, true);
  let stored: Awaited<ReturnType<SessionStore['get']>>;
  try {
    stored = await host.store().get(id);
  } catch (error) {
    throw unavailable(error);
  }
  return stored === undefined
    ? new RequestSession(undefined, true)
    : new RequestSession({ id, json: stored.data, ttlLeftMs: stored.ttlLeftMs });
}

/**
 * After the handler: the session saved when it changed (or its expiry extended when a tenth of it
 * has passed), the id it replaced forgotten, and the cookie sent to match. `undefined` when the
 * store has nothing to do; rejects with a 503 `SESSION_STORE_UNAVAILABLE` when it fails, and with
 * a `FLO_ERR_SESSION_TOO_LARGE` or `FLO_ERR_SESSION_VALUE` when the data cannot be saved.
 */
export function saveSession(host: SessionHost, ctx: SessionRequest, session: RequestSession): Promise<void> | undefined {
  const forget = session.loadedId !== undefined && session.loadedId !== session.id ? session.loadedId : undefined;
  let json: string | undefined;
  let extend = false;
  if (session.changed) {
    // a new id with nothing in it is not worth a row (an anonymous visitor's session, a destroyed one)
    if (!session.empty || session.loadedId === session.id) json = serialize(session, host.maxBytes);
  } else if (session.loadedId !== undefined && session.ttlLeftMs < host.ttlMs * (1 - TOUCH_AFTER)) {
    json = session.loadedJson;
    extend = true;
  }
  if (json === undefined && forget === undefined) {
    if (session.stale) clearCookie(host, ctx);
    return undefined;
  }
  const store = host.store();
  const saved = Promise.all([
    json === undefined ? undefined : write(store, extend, session.id, json, host.ttlMs),
    forget === undefined ? undefined : store.delete(forget),
  ]);
  return saved.then(
    () => {
      if (json === undefined) clearCookie(host, ctx);
      else
        ctx.cookies.set(host.cookieName, session.id, {
          signed: true,
          maxAge: Math.floor(host.ttlMs / 1000),
          secure: host.alwaysSecure || ctx.protocol === 'https',
        });
    },
    (error: unknown) => {
      throw unavailable(error);
    },
  );
}

/** Saves the session, or only extends its expiry when the data is as loaded and the store can (`touch`). */
function write(store: SessionStore, extend: boolean, id: string, json: string, ttlMs: number): Promise<void> {
  return extend && store.touch !== undefined ? store.touch(id, json, ttlMs) : store.set(id, json, ttlMs);
}

function clearCookie(host: SessionHost, ctx: SessionRequest): void {
  ctx.cookies.clear(host.cookieName, { secure: host.alwaysSecure || ctx.protocol === 'https' });
}

function serialize(session: RequestSession, maxBytes: number): string {
  let json: string;
  try {
    json = JSON.stringify(session);
  } catch (error) {
    throw createError('FLO_ERR_SESSION_VALUE', { reason: (error as Error).message }, { cause: error });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) throw createError('FLO_ERR_SESSION_TOO_LARGE', { bytes, max: maxBytes });
  return json;
}

function unavailable(error: unknown): KError {
  return KError.of('SESSION_STORE_UNAVAILABLE', 'the session store cannot be reached: retry later', {
    cause: error,
    headers: { 'Retry-After': '1' },
  });
}
