import { request } from 'node:http';

/**
 * One GET on its own TCP connection (`agent: false`, so `Connection: close`). node:cluster deals
 * connections, not requests, round-robin to the workers: a new connection is what reaches the next worker
 * (a replacement included), where a keep-alive one stays with the worker that accepted it. Rejects on a
 * network error or after `timeoutMs`; any status resolves.
 */

export interface Reply {
  status: number;
  body: string;
}

export function get(port: number, path: string, timeoutMs = 5_000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
