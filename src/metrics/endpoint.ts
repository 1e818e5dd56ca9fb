import type { Server } from 'node:http';
import { listen } from '../utils/listen.ts';
import { createServer } from '../utils/node-http.ts';

export interface MetricsSource {
  /** The exposition text. */
  collect(): Promise<string>;
  readonly contentType: string;
  onError?(error: unknown): void;
}

/**
 * Serves Prometheus text at `GET {path}` on its own port: a standalone App's
 * registry, or the primary's aggregate over the workers. Resolves once listening.
 */
export async function serveMetrics(
  source: MetricsSource,
  options: { host: string; port: number; path: string },
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== options.path || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    source.collect().then(
      (text) => {
        // Encoded once, sent with its length in one write rather than chunked.
        const body = Buffer.from(text);
        res.writeHead(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store', 'Content-Length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        source.onError?.(error);
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
      },
    );
  });
  const { port } = await listen(server, options.port, options.host);
  return { server, port };
}
