import { randomBytes } from 'node:crypto';

/**
 * What sessions hold, by key: any key reads as `unknown` until the service declares its keys by
 * declaration merging; `session.get('userId')` is then typed.
 *
 * @example
 * declare module 'flotilla' {
 *   interface SessionData { userId: string; cart: string[] }
 * }
 */
export interface SessionData {
  [key: string]: unknown;
}

/**
 * A request's session (`await ctx.session()`): its data, read and changed in memory, saved once
 * after the handler when it changed (docs/guides/sessions.md). Values must survive JSON.
 *
 * @example
 * const session = await ctx.session();
 * session.regenerate(); // at login: a new id, the same data (no session fixation)
 * session.set('userId', user.id);
 */
export interface Session {
  /** The session's id, as its cookie carries it (a new one after `regenerate()`). */
  readonly id: string;
  get<K extends keyof SessionData & string>(key: K): SessionData[K] | undefined;
  set<K extends keyof SessionData & string>(key: K, value: SessionData[K]): void;
  delete(key: keyof SessionData & string): void;
  /** A new id for the same data, the old one removed from the store: call it when the user logs in. */
  regenerate(): void;
  /** Empties the session and removes it from the store and its cookie from the client; a later `set` starts a new one under a new id. */
  destroy(): void;
}

/**
 * The session of one request: the data as loaded from the store (or empty), the changes its
 * handler made, and the id the store must forget when it is saved (src/app/sessions/save-session.ts).
 */
export class RequestSession implements Session {
  #id: string;
  /** The id the session was loaded under: forgotten by the store once `regenerate()` or `destroy()` replaced it. */
  readonly loadedId: string | undefined;
  /** The data as the store held it (JSON): what a save that only extends the expiry writes back. */
  readonly loadedJson: string | undefined;
  /** Milliseconds the stored session had left when it was loaded (0 for a new one). */
  readonly ttlLeftMs: number;
  /** The request's cookie named a session the store does not have (expired, destroyed, forged). */
  readonly stale: boolean;
  #data: Record<string, unknown>;
  /** Whether the data changed since it was loaded. */
  changed = false;

  constructor(loaded: { id: string; json: string; ttlLeftMs: number } | undefined, stale = false) {
    this.#id = loaded?.id ?? newSessionId();
    this.loadedId = loaded?.id;
    this.loadedJson = loaded?.json;
    this.ttlLeftMs = loaded?.ttlLeftMs ?? 0;
    this.#data = loaded === undefined ? {} : parseData(loaded.json);
    this.stale = stale;
  }

  get id(): string {
    return this.#id;
  }

  get<K extends keyof SessionData & string>(key: K): SessionData[K] | undefined {
    return Object.hasOwn(this.#data, key) ? (this.#data[key] as SessionData[K]) : undefined;
  }

  set<K extends keyof SessionData & string>(key: K, value: SessionData[K]): void {
    this.#data[key] = value;
    this.changed = true;
  }

  delete(key: keyof SessionData & string): void {
    if (!Object.hasOwn(this.#data, key)) return;
    delete this.#data[key];
    this.changed = true;
  }

  regenerate(): void {
    this.#id = newSessionId();
    this.changed = true;
  }

  destroy(): void {
    this.#id = newSessionId();
    this.#data = {};
    this.changed = true;
  }

  /** Whether the session holds no data. */
  get empty(): boolean {
    for (const _ in this.#data) return false;
    return true;
  }

  /** The data, for `JSON.stringify`. */
  toJSON(): Record<string, unknown> {
    return this.#data;
  }
}

/** The stored JSON as an object; anything else (a store written by something else) as an empty session. */
function parseData(json: string): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(json);
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** 192 random bits, base64url: far beyond the 64 bits of entropy a session id needs to be unguessable. */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}
