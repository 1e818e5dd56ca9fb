/**
 * The JSON Schema of the configuration (KConfig + cluster keys). One schema
 * validates the YAML file and `new App(config)`; unknown keys are errors.
 */
const int = (minimum: number, maximum = Number.MAX_SAFE_INTEGER) => ({ type: 'integer', minimum, maximum }) as const;
const ms = (minimum = 0, maximum = 3_600_000) => int(minimum, maximum);
const text = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const path = { type: 'string', pattern: "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$", maxLength: 256 } as const;
const strings = (items: object = text) => ({ type: 'array', items, maxItems: 256 }) as const;
const object = (properties: Record<string, object>, required: string[] = []) =>
  ({ type: 'object', additionalProperties: false, properties, required }) as const;

/** The largest `workers` count the schema accepts. */
export const MAX_WORKERS = 1024;

const HTTP_METHOD = { enum: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE', 'OPTIONS'] } as const;
const HEADER_NAME = { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", maxLength: 128 } as const;

export const CONFIG_SCHEMA = object({
  serviceName: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 128 },
  port: int(0, 65535),
  host: text,
  env: { enum: ['development', 'staging', 'production'] },
  disableHealth: { type: 'boolean' },
  docs: object({
    path,
    title: text,
    version: text,
    description: { type: 'string', maxLength: 65536 },
    contact: object({ name: text, url: { type: 'string', format: 'uri' }, email: { type: 'string', format: 'email' } }),
    license: object({ name: text, url: { type: 'string', format: 'uri' } }, ['name']),
    servers: strings({ type: 'string', pattern: '^\\S+( - .+)?$', maxLength: 1024 }),
    tags: { type: 'array', maxItems: 256, items: object({ name: text, description: { type: 'string' } }, ['name']) },
  }),
  cors: object({
    origins: strings({ type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$', maxLength: 256 }),
    methods: strings(HTTP_METHOD),
    allowedHeaders: strings(HEADER_NAME),
    exposedHeaders: strings(HEADER_NAME),
    credentials: { type: 'boolean' },
    maxAge: int(0, 86_400),
  }),
  limits: object({
    bodyBytes: int(0, 1_073_741_824),
    paramLength: int(1, 65_536),
    headerBytes: int(1_024, 1_048_576),
  }),
  timeouts: object({
    headersMs: ms(1),
    requestMs: ms(1),
    keepAliveMs: ms(1),
    socketMs: ms(1),
  }),
  logging: object({
    level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    requests: { type: 'boolean' },
  }),
  health: object({ timeoutMs: ms(1, 60_000) }),
  shutdown: object({ timeoutMs: ms(1, 600_000), drainDelayMs: ms(0, 600_000) }),
  metrics: object({ enabled: { type: 'boolean' }, port: int(0, 65535), host: text, path }),
  i18n: object({ directory: text, defaultLocale: { type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' } }, [
    'directory',
    'defaultLocale',
  ]),
  workers: { oneOf: [int(1, MAX_WORKERS), { const: 'auto' }] },
  service: text,
  cluster: object({
    startupTimeoutMs: ms(1),
    backoffInitialMs: ms(0),
    backoffMaxMs: ms(0),
    stableAfterMs: ms(0),
    crashLoopFailures: int(1, 1000),
    crashLoopWindowMs: ms(1),
    /** Deprecated, no effect: scrapes are answered from the snapshots workers push. Accepted so that existing files stay valid. */
    scrapeTimeoutMs: ms(1, 60_000),
    heartbeatIntervalMs: ms(10),
    heartbeatTimeoutMs: ms(0),
    maxMemoryMB: int(0, 1_048_576),
    maxRequests: int(0),
    maxRequestsJitter: int(0),
    balancing: { enum: ['primary', 'kernel'] },
    metricsIntervalMs: ms(100),
    allowFastRestarts: { type: 'boolean' },
    allowOversubscription: { type: 'boolean' },
  }),
});
