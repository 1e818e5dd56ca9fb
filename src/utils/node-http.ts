import { createRequire } from 'node:module';

/**
 * `node:http`, required rather than imported. An ESM `import … from 'node:http'`
 * builds the module's ESM facade, which reads every export once, the lazy
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters included: that loads
 * Node's bundled undici, ≈20 ms of start-up and ≈13 MB of RSS in every process
 * that never opens a WebSocket (measured in bench/results/latest.md, "Start,
 * memory"). `require` returns the module object and reads nothing.
 *
 * @example
 * import { createServer } from '../utils/node-http.ts';
 */
const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, STATUS_CODES, ServerResponse } = http;
