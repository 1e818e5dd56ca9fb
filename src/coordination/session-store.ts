/**
 * Where sessions are kept (ARCHITECTURE.md, "Sessions"): each one a JSON string under its id, with
 * an expiry. A store is the primary's memory (for every worker of a pod), the coordinator's Redis
 * or PostgreSQL (for every replica), or, for a cluster worker, the primary reached over IPC; or a
 * service's own, given with `app.setSessionStore` (docs/guides/sessions.md). Every method rejects
 * when the store cannot be reached: the request is answered 503 `SESSION_STORE_UNAVAILABLE`, never
 * with an empty session.
 *
 * @example
 * const sessions = new Map<string, { data: string; expires: number }>();
 * app.setSessionStore({
 *   get: async (id) => {
 *     const s = sessions.get(id);
 *     return s && s.expires > Date.now() ? { data: s.data, ttlLeftMs: s.expires - Date.now() } : undefined;
 *   },
 *   set: async (id, data, ttlMs) => void sessions.set(id, { data, expires: Date.now() + ttlMs }),
 *   delete: async (id) => void sessions.delete(id),
 *   close: async () => sessions.clear(),
 * });
 */
export interface SessionStore {
  /** The session `id` and the ms it has left; `undefined` when there is none (never was, expired, destroyed). */
  get(id: string): Promise<StoredSession | undefined>;
  /** Keeps `data` (JSON) under `id` for `ttlMs` from now, replacing what was there. */
  set(id: string, data: string, ttlMs: number): Promise<void>;
  /**
   * Extends the expiry of `id`, which holds `data` unchanged, to `ttlMs` from now (optional: a store
   * without it is given a `set`). An express-session store's `touch`.
   */
  touch?(id: string, data: string, ttlMs: number): Promise<void>;
  /** Removes the session `id` (nothing when there is none). */
  delete(id: string): Promise<void>;
  /** Releases the store's connections and memory. */
  close(): Promise<void>;
}

/**
 * A session as the store holds it: what its `get` resolves.
 *
 * @example
 * const stored: StoredSession = { data: '{"userId":"ada"}', ttlLeftMs: 86_400_000 };
 */
export interface StoredSession {
  /** Its data, as JSON. */
  readonly data: string;
  /** Milliseconds until it expires, unless a request extends it. */
  readonly ttlLeftMs: number;
}
