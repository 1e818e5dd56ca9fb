import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';
import { type Coordinator, Link } from './coordinator.ts';

/**
 * A connection of its own to the coordinator at `coordination.url`, opened on the first `get()`:
 * what the rate limits and the sessions each keep their state in. Its client is imported then, so
 * a service that uses neither never loads it; a failed opening (a missing client package) fails
 * that use, and the next one tries again.
 *
 * @example
 * const coordinator = new LazyCoordinator(config, url, logger, { component: 'sessions', down: 'requests with a session get 503' });
 * await (await coordinator.get()).getSession(id);
 */
export class LazyCoordinator {
  readonly #config: ResolvedConfig;
  readonly #url: string;
  readonly #logger: Logger;
  readonly #use: { readonly component: string; readonly down: string };
  #coordinator: Promise<Coordinator> | undefined;
  #closed = false;

  /** `use`: the logger's `component`, and what happens while the coordinator is down (logged by its `Link`). */
  constructor(config: ResolvedConfig, url: string, logger: Logger, use: { readonly component: string; readonly down: string }) {
    this.#config = config;
    this.#url = url;
    this.#logger = logger;
    this.#use = use;
  }

  get(): Promise<Coordinator> {
    if (this.#closed) return Promise.reject(new Error(`the ${this.#use.component} store is closed`));
    this.#coordinator ??= this.#open();
    return this.#coordinator;
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
    const logger = this.#logger.child({ component: this.#use.component, backend });
    const options = {
      url: this.#url,
      service: serviceName,
      holder: `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`,
      timeoutMs: coordination.timeoutMs,
      leaseTtlMs: coordination.leaseTtlMs,
      leaseRenewMs: coordination.leaseRenewMs,
      logger,
      link: new Link(logger, () => {}, this.#use.down),
    };
    return (
      backend === 'redis'
        ? import('./redis.ts').then((m) => m.redisCoordinator(options))
        : import('./postgres.ts').then((m) => m.postgresCoordinator(options))
    ).catch((error: unknown) => {
      this.#coordinator = undefined;
      throw error;
    });
  }
}
