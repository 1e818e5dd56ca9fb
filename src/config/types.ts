/** Contact information of the documented API (OpenAPI `info.contact`). */
export interface DocsContact {
  name?: string;
  url?: string;
  email?: string;
}

/** License of the documented API (OpenAPI `info.license`). */
export interface DocsLicense {
  name: string;
  url?: string;
}

/** A tag grouping operations in the documentation. */
export interface DocsTag {
  name: string;
  description?: string;
}

/** Documentation settings (seed: `DocsConfig`). */
export interface DocsConfig {
  /** Path of the documentation page; `{path}/openapi.json` serves the document. Default `/docs`. */
  path?: string;
  title?: string;
  /** Version of the described API. Default `1.0.0`. */
  version?: string;
  description?: string;
  contact?: DocsContact;
  license?: DocsLicense;
  /** Each entry is `"<url> - <description>"` (the description is optional). */
  servers?: string[];
  tags?: DocsTag[];
}

export interface CorsConfig {
  /** Allowed origins: exact origins, or `['*']` for any. Empty: CORS disabled. Default `[]`. */
  origins?: string[];
  methods?: string[];
  allowedHeaders?: string[];
  exposedHeaders?: string[];
  credentials?: boolean;
  /** Seconds a preflight answer may be cached. */
  maxAge?: number;
}

export interface LimitsConfig {
  /** Largest accepted request body, in bytes. Default 1 MiB. */
  bodyBytes?: number;
  /** Longest accepted route parameter, in characters. Default 100. */
  paramLength?: number;
  /** Largest accepted request head (request line + headers), in bytes. Default 16 KiB. */
  headerBytes?: number;
}

export interface TimeoutsConfig {
  /** Time allowed to receive the complete request head. Default 10 s. */
  headersMs?: number;
  /** Time allowed to receive the complete request. Default 30 s. */
  requestMs?: number;
  /** Idle keep-alive timeout; above common load balancers' 60 s. Default 72 s. */
  keepAliveMs?: number;
  /** A connection with no traffic either way while a request is being served is closed (slow readers). Default 30 s. */
  socketMs?: number;
}

export interface LoggingConfig {
  level?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** One log line per request. Default true. */
  requests?: boolean;
}

export interface HealthConfig {
  /** Timeout of each health checker. Default 2000 ms. */
  timeoutMs?: number;
}

export interface ShutdownConfig {
  /** The shutdown budget: hooks' signal aborts this long after shutdown began. Default 10000 ms. */
  timeoutMs?: number;
  /** Wait this long with `/health` at 503 before closing the listener, so load balancers notice. Default 0. */
  drainDelayMs?: number;
}

export interface MetricsConfig {
  /** Collect request metrics. Default true. */
  enabled?: boolean;
  /** Port of the Prometheus endpoint (primary in cluster mode, the App itself standalone). Default 9464. */
  port?: number;
  host?: string;
  /** Path of the Prometheus endpoint. Default `/metrics`. */
  path?: string;
}

export interface I18nConfig {
  /** Directory of message catalogs, one `<locale>.yaml`/`.json` file per locale (relative to the YAML file). */
  directory: string;
  /** Locale used when the request's `Accept-Language` matches none, and for missing keys. */
  defaultLocale: string;
}

export interface ClusterConfig {
  /** A worker must be listening within this time. Default 10000 ms. */
  startupTimeoutMs?: number;
  /** First restart delay. Default 100 ms. */
  backoffInitialMs?: number;
  /** Largest restart delay. Default 5000 ms. */
  backoffMaxMs?: number;
  /** A worker up this long resets the backoff. Default 30000 ms. */
  stableAfterMs?: number;
  /** This many worker failures ... Default 5. */
  crashLoopFailures?: number;
  /** ... within this window make the primary give up. Default 60000 ms. */
  crashLoopWindowMs?: number;
  /**
   * @deprecated No effect: a scrape no longer waits for workers, it is answered from the metric
   * snapshots they push every `metricsIntervalMs`. Still accepted so that existing files stay valid.
   */
  scrapeTimeoutMs?: number;
  /** The primary pings each worker over IPC this often. Default 1000 ms, at least 10. */
  heartbeatIntervalMs?: number;
  /**
   * A worker that has not answered the primary's pings for this long is stuck (a blocked event
   * loop) and is replaced. Must exceed `heartbeatIntervalMs`; `0` turns the watchdog off. Default 10000 ms.
   */
  heartbeatTimeoutMs?: number;
  /**
   * A worker whose resident set size (RSS) stays above this many MiB is recycled gracefully (a new
   * worker takes its slot, then it shuts down within the budget). `0` (the default) turns it off.
   */
  maxMemoryMB?: number;
  /**
   * A worker that served `maxRequests` plus a random `0..maxRequestsJitter` requests is recycled
   * gracefully (a bound on slow leaks). `0` (the default) turns it off.
   */
  maxRequests?: number;
  /**
   * Up to this many more requests per worker, drawn at random for each worker, so that workers
   * started together are not all recycled together. Requires `maxRequests`. Default 0.
   */
  maxRequestsJitter?: number;
  /**
   * Who hands connections to workers: `primary` (node:cluster's round robin, `SCHED_RR`: even
   * spread) or `kernel` (`SCHED_NONE`: workers accept on the shared socket themselves, no hop
   * through the primary, but the spread is uneven). Default `primary`.
   */
  balancing?: 'primary' | 'kernel';
  /** Workers push their metric snapshot to the primary this often. Default 1000 ms, at least 100. */
  metricsIntervalMs?: number;
  /**
   * Opt in to `backoffMaxMs` below 100 ms together with `crashLoopFailures` above 10, which is
   * refused otherwise: a crashing worker would be forked again and again in a tight loop, and the
   * primary would take long to give up. Default false.
   */
  allowFastRestarts?: boolean;
  /** Opt in to a numeric `workers` above 4 × the CPUs available, which is refused otherwise. Default false. */
  allowOversubscription?: boolean;
}

/**
 * Configuration of an App, and the top level of the YAML file.
 *
 * @example
 * const app = new App({ serviceName: 'books', port: 0, env: 'production' });
 */
export interface KConfig {
  serviceName?: string;
  port?: number;
  host?: string;
  env?: 'development' | 'staging' | 'production';
  disableHealth?: boolean;
  docs?: DocsConfig;
  cors?: CorsConfig;
  limits?: LimitsConfig;
  timeouts?: TimeoutsConfig;
  logging?: LoggingConfig;
  health?: HealthConfig;
  shutdown?: ShutdownConfig;
  metrics?: MetricsConfig;
  /** Message catalogs for `ctx.t` and translated problem details. */
  i18n?: I18nConfig;
  /** Cluster mode: number of workers, or `auto` for the CPUs the container may use. */
  workers?: number | 'auto';
  /** Cluster mode: path of the service's setup module, relative to the YAML file. */
  service?: string;
  cluster?: ClusterConfig;
}

type Full<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/** A validated config with every default applied; frozen. */
export interface ResolvedConfig {
  readonly serviceName: string;
  readonly port: number;
  readonly host: string;
  readonly env: 'development' | 'staging' | 'production';
  readonly disableHealth: boolean;
  readonly docs: Full<Pick<DocsConfig, 'path' | 'version' | 'title' | 'servers' | 'tags'>> &
    Readonly<Pick<DocsConfig, 'description' | 'contact' | 'license'>>;
  readonly cors: Full<CorsConfig>;
  readonly limits: Full<LimitsConfig>;
  readonly timeouts: Full<TimeoutsConfig>;
  readonly logging: Full<LoggingConfig>;
  readonly health: Full<HealthConfig>;
  readonly shutdown: Full<ShutdownConfig>;
  readonly metrics: Full<MetricsConfig>;
  readonly i18n?: Readonly<I18nConfig>;
  readonly workers: number | 'auto';
  readonly service?: string;
  readonly cluster: Full<ClusterConfig>;
}
