import type { SessionStore, StoredSession } from '../../coordination/session-store.ts';
import { createError } from '../../errors/flotilla-error.ts';

export type { SessionStore, StoredSession } from '../../coordination/session-store.ts';

/** What an express-session store passes its callbacks: an error (or `null`), and for `get` the session. */
type StoreCallback = (error?: unknown, session?: unknown) => void;

/**
 * A store written for express-session: connect-redis, connect-pg-simple, connect-mongo and the
 * others, callback style. `app.setSessionStore` takes one (docs/guides/sessions.md); flotilla
 * hands it each session as `{ cookie, data }` ({@link ExpressSession}).
 *
 * @example
 * import { RedisStore } from 'connect-redis';
 * const store: ExpressSessionStore = new RedisStore({ client, prefix: 'books:sess:' });
 */
export interface ExpressSessionStore {
  /** Calls back with the session `sid`, or `null`/`undefined` when there is none. */
  get(sid: string, callback: StoreCallback): unknown;
  /** Keeps `session` under `sid`, until `session.cookie.expires`. */
  set(sid: string, session: object, callback?: StoreCallback): unknown;
  /** Removes the session `sid`. */
  destroy(sid: string, callback?: StoreCallback): unknown;
  /** Extends the expiry of `sid` to `session.cookie.expires`, without rewriting it (optional). */
  touch?(sid: string, session: object, callback?: StoreCallback): unknown;
  /** Releases what the store opened itself (connect-pg-simple's own pool), when it has this method. */
  close?(): unknown;
}

/**
 * A session as flotilla gives it to an express-session store: the session's data under `data`, and a
 * `cookie` as express-session's own, whose `expires` (and `maxAge`, `originalMaxAge`) say
 * `sessions.ttlMs` from the save: what connect-redis and connect-pg-simple expire the entry by.
 *
 * @example
 * // what connect-redis keeps under `sess:<id>` after a login that set userId
 * { cookie: { originalMaxAge: 86400000, maxAge: 86400000, expires: '2026-01-02T10:00:00.000Z', httpOnly: true, path: '/', sameSite: 'lax' },
 *   data: { userId: 'ada' } }
 */
export interface ExpressSession {
  readonly cookie: {
    readonly originalMaxAge: number;
    readonly maxAge: number;
    readonly expires: Date;
    readonly httpOnly: true;
    readonly path: '/';
    readonly sameSite: 'lax';
  };
  readonly data: Record<string, unknown>;
}

/** Whether `store` has the methods of an express-session store (`destroy` where flotilla's own has `delete`). */
export function isExpressSessionStore(store: unknown): store is ExpressSessionStore {
  const s = store as Partial<Record<keyof ExpressSessionStore, unknown>> | null;
  return (
    typeof s === 'object' && s !== null && typeof s.get === 'function' && typeof s.set === 'function' && typeof s.destroy === 'function'
  );
}

/** Whether `store` has the methods of flotilla's own {@link SessionStore}. */
export function isSessionStore(store: unknown): store is SessionStore {
  const s = store as Partial<Record<keyof SessionStore, unknown>> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.get === 'function' &&
    typeof s.set === 'function' &&
    typeof s.delete === 'function' &&
    typeof s.close === 'function'
  );
}

/**
 * `store` as a {@link SessionStore}, or `FLO_ERR_BAD_SESSION_STORE` when it is neither an
 * express-session store nor one of flotilla's.
 *
 * @example
 * const store = sessionStoreOf(new RedisStore({ client }), config.coordination.timeoutMs);
 */
export function sessionStoreOf(store: unknown, timeoutMs: number): SessionStore {
  if (isSessionStore(store)) return store;
  if (isExpressSessionStore(store)) return new ExpressStoreAdapter(store, timeoutMs);
  const got =
    store === null ? 'null' : typeof store === 'object' ? `an object with ${Object.keys(store).join(', ') || 'no keys'}` : typeof store;
  throw createError('FLO_ERR_BAD_SESSION_STORE', { got });
}

/**
 * An express-session store as flotilla's {@link SessionStore}: each session `{ cookie, data }` (see
 * {@link ExpressSession}), each call answered through its callback within `timeoutMs`, or rejected
 * (the request is then answered 503 `SESSION_STORE_UNAVAILABLE`, as with the built-in stores). A
 * session whose `cookie.expires` has passed reads as none; extending an expiry is the store's `touch`
 * when it has one.
 */
class ExpressStoreAdapter implements SessionStore {
  readonly #store: ExpressSessionStore;
  readonly #timeoutMs: number;

  constructor(store: ExpressSessionStore, timeoutMs: number) {
    this.#store = store;
    this.#timeoutMs = timeoutMs;
  }

  async get(id: string): Promise<StoredSession | undefined> {
    const session = await this.#call('get', (done) => this.#store.get(id, done));
    if (typeof session !== 'object' || session === null) return undefined;
    const { cookie, data } = session as { cookie?: { expires?: unknown }; data?: unknown };
    const expires = cookie?.expires;
    const ttlLeftMs = typeof expires === 'string' || expires instanceof Date ? new Date(expires).getTime() - Date.now() : Number.NaN;
    // a session without a date (written by something else) is saved again at once, with flotilla's
    if (ttlLeftMs <= 0) return undefined;
    const json = typeof data === 'object' && data !== null && !Array.isArray(data) ? JSON.stringify(data) : '{}';
    return { data: json, ttlLeftMs: Number.isNaN(ttlLeftMs) ? 0 : ttlLeftMs };
  }

  async set(id: string, data: string, ttlMs: number): Promise<void> {
    await this.#call('set', (done) => this.#store.set(id, session(data, ttlMs), done));
  }

  /** The data is the same: the store's `touch` extends the expiry when it has one, else the session is written again. */
  async touch(id: string, data: string, ttlMs: number): Promise<void> {
    const { touch } = this.#store;
    if (touch === undefined) return this.set(id, data, ttlMs);
    await this.#call('touch', (done) => touch.call(this.#store, id, session(data, ttlMs), done));
  }

  async delete(id: string): Promise<void> {
    await this.#call('destroy', (done) => this.#store.destroy(id, done));
  }

  async close(): Promise<void> {
    await this.#store.close?.();
  }

  /** Runs one call of the store: settled by its callback (or its returned promise's rejection), rejected after `timeoutMs`. */
  #call(method: string, run: (done: StoreCallback) => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the session store's ${method} did not call back within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      const done: StoreCallback = (error, value) => {
        clearTimeout(timer);
        if (error !== null && error !== undefined) reject(error);
        else resolve(value);
      };
      try {
        const returned = run(done);
        if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function')
          (returned as PromiseLike<unknown>).then(undefined, done);
      } catch (error) {
        done(error);
      }
    });
  }
}

/** The session `data` (JSON) as an express-session store is given it: `{ cookie, data }`, expiring `ttlMs` from now. */
function session(data: string, ttlMs: number): ExpressSession {
  return {
    cookie: { originalMaxAge: ttlMs, maxAge: ttlMs, expires: new Date(Date.now() + ttlMs), httpOnly: true, path: '/', sameSite: 'lax' },
    data: JSON.parse(data) as Record<string, unknown>,
  };
}
