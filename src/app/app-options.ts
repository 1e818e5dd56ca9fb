import type { DestinationStream, Logger } from 'pino';
import type { KConfig, ResolvedConfig } from '../config/types.ts';
import type { CounterStore } from '../coordination/counter-store.ts';
import type { TopicTransport } from '../coordination/replica-topics.ts';
import type { SessionStore } from '../coordination/session-store.ts';
import { type RateLimitOptions, type RateLimitPolicy, rateLimitPolicy } from './core/rate-limit-policy.ts';
import type { AppRole } from './core/registrar.ts';
import type { ConnectionSource } from './transport/connection-source.ts';

/**
 * How an App is hosted. Users give at most `logger`; the cluster's worker process
 * sets the others (`src/worker/worker-main.ts`) to hand signals, schedulers and the
 * metrics endpoint to the primary.
 */
export interface AppOptions {
  /**
   * The service's own pino logger: flotilla's request lines and its own lines (start-up, shutdown,
   * errors, `ctx.logger`'s children) go through it, with its bindings, redaction, serializers, mixin,
   * level and destination; `logging.level` and `logging.pretty` are then not used (the logger is the
   * service's), `logging.requests` still turns the request lines off. What flotilla binds of its own
   * (the worker's slot, a request's id) it adds with `logger.child(…)`. Default: flotilla's logger,
   * JSON lines on stdout (docs/guides/logging.md).
   *
   * @example
   * const logger = pino({ redact: ['req.headers.authorization'], base: { team: 'books' } });
   * const app = new App(config, { logger });
   */
  logger?: Logger;
  /** Where flotilla's own logger writes (default: stdout); not used with `logger`. */
  logStream?: DestinationStream;
  /** Where the setup runs, as `app.role` tells it (default `standalone`): information, it changes nothing here. */
  role?: AppRole;
  /** Extra fields on every log line (the cluster sets the worker slot). */
  logBindings?: Record<string, unknown>;
  /** Trap SIGINT/SIGTERM in `listen()` (default true). */
  handleSignals?: boolean;
  /**
   * Run the schedulers registered with `registerScheduler` and the `beforeServe` hooks (default true; the
   * cluster runs them once, in its primary).
   */
  runSchedulers?: boolean;
  /** Serve this App's registry on `metrics.port` (default: when the config given has `metrics`). */
  serveMetrics?: boolean;
  /** Add the process metrics (`process_*`, `nodejs_*`) to the registry (default: as `serveMetrics`). */
  processMetrics?: boolean;
  /**
   * Listen with SO_REUSEPORT (Linux): beside other processes listening on the same port with it, the
   * kernel spreading new connections among them by a hash of their addresses (default false; a cluster
   * shares one socket among its workers instead, see `cluster.balancing`).
   */
  reusePort?: boolean;
  /** Bind no socket: the connections come from this source (the cluster's primary hands them over). */
  connections?: ConnectionSource;
  /**
   * Where rate limits are counted (default: in this process, or at the coordinator with
   * `coordination.url`); a cluster worker counts at its primary, for the whole cluster.
   */
  counterStore?: CounterStore;
  /**
   * Where sessions are kept (default: `sessions.store` of the config, opened on the first
   * `ctx.session()`); a cluster worker keeps them at its primary.
   */
  sessionStore?: SessionStore;
  /** How `app.publish` reaches the other processes (default: this App's own sockets only; a cluster worker goes through its primary). */
  topics?: TopicTransport;
  /**
   * With `tls`: poll the certificate files and load a changed pair, and export its expiry (default true).
   * A cluster worker leaves it to its primary, which hands the pair over (`app.useCertificates`).
   */
  watchCertificates?: boolean;
}

/**
 * What `new App(config)` takes: a {@link KConfig}, whose `rateLimit` may also carry a `key`
 * function in code (the YAML file's cannot).
 *
 * @example
 * new App({ rateLimit: { max: 100, windowMs: 60_000, key: (ctx) => String(ctx.headers['x-api-key']) } });
 */
export type AppConfig = Omit<KConfig, 'rateLimit'> & { rateLimit?: RateLimitOptions };

/**
 * The config without `rateLimit.key` (a function: not for the schema, nor for a YAML file), and the key.
 * A config with none is returned as is (a resolved one stays resolved).
 */
export function splitRateLimitKey(config: KConfig | AppConfig | undefined): { plain: KConfig | undefined; key: unknown } {
  const limit = config?.rateLimit as Record<string, unknown> | undefined;
  if (config === undefined || typeof limit !== 'object' || limit === null || !('key' in limit)) {
    return { plain: config as KConfig | undefined, key: undefined };
  }
  const { key, ...rest } = limit;
  return { plain: { ...config, rateLimit: rest } as KConfig, key };
}

/**
 * The App's own rate limit: `rateLimit` of the resolved config, with the `key` function given in
 * code (see {@link splitRateLimitKey}); every route's unless its group or itself sets one.
 *
 * @example
 * const { plain, key } = splitRateLimitKey(config);
 * const policy = appRateLimit(resolveConfig(plain ?? {}), key);
 */
export function appRateLimit(config: ResolvedConfig, key: unknown): RateLimitPolicy | false | undefined {
  const own = config.rateLimit;
  return rateLimitPolicy(own === undefined ? undefined : { ...own, ...(key === undefined ? {} : { key }) }, 'default', 'the App');
}
