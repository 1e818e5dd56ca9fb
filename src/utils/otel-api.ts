import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';

/**
 * The OpenTelemetry API (the peer dependency), its CommonJS build: the one prom-client requires
 * too, so a process loads the API once. An ES import would load its ES build beside it, some 50
 * modules more on every start (the two share their state: the global registration the service's
 * SDK makes).
 *
 * @example
 * const { trace, ROOT_CONTEXT } = otel;
 */
export const otel = createRequire(import.meta.url)('@opentelemetry/api') as typeof Api;
