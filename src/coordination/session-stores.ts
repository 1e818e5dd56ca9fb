import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';
import { LazyCoordinator } from './lazy-coordinator.ts';
import { MemorySessionStore } from './memory-session-store.ts';
import type { SessionStore, StoredSession } from './session-store.ts';

/**
 * Where a process tree keeps its sessions (`sessions.store`): in memory (a standalone App; the
 * cluster's primary, for all its workers), or at the coordinator of `coordination.url`, shared by
 * every replica (its client opened on the first use).
 *
 * @example
 * const store = openSessionStore(config, logger);
 * await store.set(id, JSON.stringify({ userId: 7 }), config.sessions.ttlMs);
 */
export function openSessionStore(config: ResolvedConfig, logger: Logger): SessionStore {
  const url = config.coordination.url ?? '';
  return config.sessions.store === 'coordination' && url !== ''
    ? new CoordinatedSessionStore(config, url, logger)
    : new MemorySessionStore({
        maxBytes: config.sessions.memoryBytes,
        onEvicted: (count) =>
          logger.warn(
            { evicted: count, memoryBytes: config.sessions.memoryBytes },
            `sessions: ${count} dropped, the least recently saved, to stay within sessions.memoryBytes`,
          ),
      });
}

/** Sessions at the coordinator: Redis keys with their TTL, or rows of `flotilla_sessions`. */
class CoordinatedSessionStore implements SessionStore {
  readonly #coordinator: LazyCoordinator;

  constructor(config: ResolvedConfig, url: string, logger: Logger) {
    this.#coordinator = new LazyCoordinator(config, url, logger, {
      component: 'sessions',
      down: 'requests that read or change a session are answered 503 SESSION_STORE_UNAVAILABLE',
    });
  }

  async get(id: string): Promise<StoredSession | undefined> {
    return (await this.#coordinator.get()).getSession(id);
  }

  async set(id: string, data: string, ttlMs: number): Promise<void> {
    await (await this.#coordinator.get()).setSession(id, data, ttlMs);
  }

  async delete(id: string): Promise<void> {
    await (await this.#coordinator.get()).deleteSession(id);
  }

  close(): Promise<void> {
    return this.#coordinator.close();
  }
}
