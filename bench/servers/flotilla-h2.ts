/**
 * flotilla full (services/items.ts) over TLS and HTTP/2, for bench/http2.ts: `MODE=h1` (plain HTTP/1.1), `h1-tls` (TLS, no
 * `http2`), `h2-tls` (TLS with `http2`: ALPN), `h2c` (`http2` in clear, beside HTTP/1.1); the pair in
 * `CERT_DIR`; `STREAMS` sets `limits.concurrentStreams`.
 */
import { join } from 'node:path';
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

const mode = process.env['MODE'] ?? 'h2-tls';
const dir = process.env['CERT_DIR'] ?? '';
const streams = process.env['STREAMS'];
await runStandalone(
  itemsConfig(portArg(), {
    http2: mode === 'h2-tls' || mode === 'h2c',
    ...(mode === 'h2c' || mode === 'h1' ? {} : { tls: { certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') } }),
    ...(streams === undefined ? {} : { limits: { concurrentStreams: Number(streams) } }),
  }),
);
