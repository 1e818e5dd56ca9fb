/**
 * Fastify full (services/fastify-items.ts) with `http2: true`, for bench/http2.ts: `MODE=h2-tls` over
 * TLS (`https` with `allowHTTP1`, the pair in `CERT_DIR`), `MODE=h2c` in clear (prior knowledge only:
 * Fastify serves no HTTP/1.1 beside h2c).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { announce, portArg } from '../services/data.ts';
import { buildFastify } from '../services/fastify-items.ts';

const dir = process.env['CERT_DIR'] ?? '';
const tls = process.env['MODE'] === 'h2-tls';
const app = await buildFastify(false, true, {
  http2: true,
  ...(tls
    ? {
        https: {
          key: readFileSync(join(dir, 'server.key'), 'utf8'),
          cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
          allowHTTP1: true,
        },
      }
    : {}),
});
const port = portArg();
await app.listen({ port, host: '127.0.0.1' });
announce(port);
process.on('SIGTERM', () => void app.close());
