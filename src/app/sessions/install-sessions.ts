import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import type { SessionStore } from '../../coordination/session-store.ts';
import { openSessionStore } from '../../coordination/session-stores.ts';
import { createError } from '../../errors/flotilla-error.ts';
import { sessionStoreOf } from './express-store.ts';
import type { SessionHost } from './session-host.ts';

/** An App's sessions, as its facade uses them. */
export interface AppSessions {
  /** What `ctx.session()` reads: the store and `sessions.*`. */
  readonly host: SessionHost;
  /**
   * `app.setSessionStore`: `store` (an express-session store, or a {@link SessionStore}) in place of the
   * one given or configured; `FLO_ERR_SESSION_STORE_FIXED` once one was set, once the App is past
   * `idle` (`state`), or once a request has used the store.
   */
  set(store: unknown, state: string): void;
  /** Closes the store, when one was given, set or opened; a failure is logged. */
  close(): void;
}

/**
 * An App's sessions: the store set by `app.setSessionStore` (in a cluster, each worker's own), else
 * the store given (`AppOptions.sessionStore`, a cluster worker's at its primary), else the config's
 * `sessions.store`, opened on the first `ctx.session()` (a service without sessions opens none).
 *
 * @example
 * const sessions = installSessions(config, logger, options.sessionStore);
 * const store = sessions.host.store(); // opened now, once
 */
export function installSessions(config: ResolvedConfig, logger: Logger, given: SessionStore | undefined): AppSessions {
  let store = given;
  let set = false;
  let used = false;
  const { ttlMs, cookieName, maxBytes } = config.sessions;
  return {
    host: {
      store: () => {
        used = true;
        store ??= openSessionStore(config, logger);
        return store;
      },
      ttlMs,
      cookieName,
      maxBytes,
      alwaysSecure: config.env !== 'development',
    },
    set(given, state) {
      const reason = set
        ? 'a session store was already set: one per App'
        : state !== 'idle'
          ? `the App is ${state}: set the store in the service's setup, before it listens`
          : used
            ? 'a request has already used the session store: set it before the first request'
            : undefined;
      if (reason !== undefined) throw createError('FLO_ERR_SESSION_STORE_FIXED', { reason });
      store = sessionStoreOf(given, config.coordination.timeoutMs);
      set = true;
    },
    close() {
      store?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the session store failed'));
    },
  };
}
