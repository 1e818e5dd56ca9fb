import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';
import { type Coordinator, Link } from './coordinator.ts';
import type { CounterStore, WindowCount } from './counter-store.ts';
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
  readonly #config: ResolvedConfig;
  readonly #url: string;
  readonly #logger: Logger;
  #coordinator: Promise<Coordinator> | undefined;
  #closed = false;

  constructor(config: ResolvedConfig, url: string, logger: Logger) {
    this.#config = config;
    this.#url = url;
    this.#logger = logger;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    if (this.#closed) throw new Error('the rate-limit store is closed');
    this.#coordinator ??= this.#open();
    return (await this.#coordinator).hit(key, windowMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const opening = this.#coordinator;
    this.#coordinator = undefined;
    await (await opening?.catch(() => undefined))?.close();
  }

  #open(): Promise<Coordinator> {
    const { coordination, serviceName } = this.#config;
    const backend = /^rediss?:/.test(this.#url) ? 'redis' : 'postgres';
    const logger = this.#logger.child({ component: 'rate-limit', backend });
    const options = {
      url: this.#url,
      service: serviceName,
      holder: `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`,
      timeoutMs: coordination.timeoutMs,
      leaseTtlMs: coordination.leaseTtlMs,
      leaseRenewMs: coordination.leaseRenewMs,
      logger,
      link: new Link(logger, () => {}, "rate limits apply each route's onStoreError (open: admitted; closed: 503)"),
    };
    const opening = (
      backend === 'redis'
        ? import('./redis.ts').then((m) => m.redisCoordinator(options))
        : import('./postgres.ts').then((m) => m.postgresCoordinator(options))
    ).catch((error: unknown) => {
      // a missing client package: every hit fails (each route's onStoreError applies), and the next tries again
      this.#coordinator = undefined;
      throw error;
    });
    return opening;
  }
}
