import { type Agent, request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}

/** GET http://127.0.0.1:<port><path>; a fresh connection unless an agent is given. */
export function get(port: number, path: string, headers: Record<string, string> = {}, agent: Agent | false = false): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

/** POST http://127.0.0.1:<port><path> with `body` as JSON, on a fresh connection. */
export function postJson(port: number, path: string, body: unknown): Promise<Reply> {
  const started = performance.now();
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) };
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, ms: performance.now() - started }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(data);
  });
}
