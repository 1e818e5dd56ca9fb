import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';
import type { CounterStore, WindowCount } from './counter-store.ts';
import { LazyCoordinator } from './lazy-coordinator.ts';
import { MemoryCounterStore } from './memory-counter-store.ts';

/**
 * Where a process tree counts its rate limits: in memory (a standalone App; the cluster's primary,
 * for all its workers), or, with `coordination.url`, at the coordinator, shared by every replica.
 * The coordinator's client is imported and connected on the first hit: a service without rate
 * limits never opens it.
 *
 * @example
 * const store = openCounterStore(config, logger); // memory, or Redis/PostgreSQL with coordination.url
 * const { count, resetMs } = await store.hit('GET /books|60000|10.0.0.7', 60_000);
 */
export function openCounterStore(config: ResolvedConfig, logger: Logger): CounterStore {
  const url = config.coordination.url ?? '';
  return url === '' ? new MemoryCounterStore() : new CoordinatedCounterStore(config, url, logger);
}

/** Counts at the coordinator, opened on the first hit with a connection of its own. */
class CoordinatedCounterStore implements CounterStore {
  readonly #coordinator: LazyCoordinator;

  constructor(config: ResolvedConfig, url: string, logger: Logger) {
    this.#coordinator = new LazyCoordinator(config, url, logger, {
      component: 'rate-limit',
      down: "rate limits apply each route's onStoreError (open: admitted; closed: 503)",
    });
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return (await this.#coordinator.get()).hit(key, windowMs);
  }

  async release(key: string): Promise<void> {
    await (await this.#coordinator.get()).release(key);
  }

  close(): Promise<void> {
    return this.#coordinator.close();
  }
}
