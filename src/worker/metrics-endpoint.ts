import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * A standalone App's own Prometheus endpoint (in cluster mode the primary
 * serves the aggregate instead). Resolves once listening.
 */
export async function serveMetrics(registry: Registry, options: { host: string; port: number; path: string }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== options.path || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
