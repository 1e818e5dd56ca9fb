import type { ResolvedConfig } from './types.ts';

/** Every default of the configuration, in one literal beside the schema. */
export const DEFAULTS = {
  serviceName: 'flotilla',
  port: 3000,
  host: '0.0.0.0',
  env: 'development',
  disableHealth: false,
  docs: { path: '/docs', version: '1.0.0', title: 'flotilla', servers: [], tags: [] },
  cors: {
    origins: [],
    methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
    allowedHeaders: [],
    exposedHeaders: ['X-Request-Id'],
    credentials: false,
    maxAge: 600,
  },
  limits: { bodyBytes: 1_048_576, paramLength: 100, headerBytes: 16_384 },
  timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 72_000, socketMs: 30_000 },
  logging: { level: 'info', requests: true },
  health: { timeoutMs: 2_000 },
  shutdown: { timeoutMs: 10_000, drainDelayMs: 0 },
  metrics: { enabled: true, port: 9464, host: '0.0.0.0', path: '/metrics' },
  workers: 'auto',
  cluster: {
    startupTimeoutMs: 10_000,
    backoffInitialMs: 100,
    backoffMaxMs: 5_000,
    stableAfterMs: 30_000,
    crashLoopFailures: 5,
    crashLoopWindowMs: 60_000,
    scrapeTimeoutMs: 1_000,
  },
} as const satisfies Omit<ResolvedConfig, 'service'>;
