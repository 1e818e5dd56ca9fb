import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import type { SessionStore } from '../../coordination/session-store.ts';
import { openSessionStore } from '../../coordination/session-stores.ts';
import type { SessionHost } from './session-host.ts';

/** An App's sessions, as its facade uses them. */
export interface AppSessions {
  /** What `ctx.session()` reads: the store and `sessions.*`. */
  readonly host: SessionHost;
  /** Closes the store, when one was given or opened; a failure is logged. */
  close(): void;
}

/**
 * An App's sessions: the store given (`AppOptions.sessionStore`, a cluster worker's at its primary),
 * else the config's `sessions.store`, opened on the first `ctx.session()` (a service without
 * sessions opens none).
 *
 * @example
 * const sessions = installSessions(config, logger, options.sessionStore);
 * const store = sessions.host.store(); // opened now, once
 */
export function installSessions(config: ResolvedConfig, logger: Logger, given: SessionStore | undefined): AppSessions {
  let store = given;
  const { ttlMs, cookieName, maxBytes } = config.sessions;
  return {
    host: {
      store: () => {
        store ??= openSessionStore(config, logger);
        return store;
      },
      ttlMs,
      cookieName,
      maxBytes,
      alwaysSecure: config.env !== 'development',
    },
    close() {
      store?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the session store failed'));
    },
  };
}
