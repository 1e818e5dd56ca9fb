import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { ResolvedConfig } from '../../config/types.ts';
import { createHttpServer } from './server.ts';

/**
 * What `app.injectWebSocket(path, options)` sends with the upgrade request.
 *
 * @example
 * await app.injectWebSocket('/chat', { headers: { authorization: `Bearer ${token}` }, protocols: ['chat.v1'] });
 */
export interface InjectWebSocketOptions {
  /** Request headers (`Authorization`, `Cookie`, `Origin`…). */
  headers?: Record<string, string>;
  /** The subprotocols offered (`Sec-WebSocket-Protocol`), in order of preference. */
  protocols?: string | string[];
}

/**
 * What `app.injectWebSocket` rejects with when the App answers the upgrade request with anything but
 * the handshake (a hook's 401, a 404, a 426…): that answer.
 *
 * @example
 * await t.assert.rejects(app.injectWebSocket('/chat'), (error: WebSocketRefused) => error.statusCode === 401);
 */
export interface WebSocketRefused extends Error {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body, as text (a problem's JSON). */
  body: string;
}

/** The App's parts the helper drives: its config (the server's limits) and its pipeline's two entries. */
export interface InjectTarget {
  config: ResolvedConfig;
  /** A plain request: the pipeline. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** An upgrade request: the pipeline, then the route's handshake (src/app/websocket/websocket-route.ts). */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/**
 * Opens a `ws` client WebSocket on `path` of an App, for tests: the upgrade request goes through the
 * App's pipeline as a real client's does (hooks, validation, middlewares, the route's `websocket`),
 * over a listener of its own on an ephemeral port of 127.0.0.1, which it closes once the handshake is
 * answered. The App need not listen (nor bind its `port` or its metrics port). Resolves with the open
 * socket, whose events are held until the caller's code after `await` has run: a listener added then
 * misses no message the route sent at once. Rejects with {@link WebSocketRefused} when the answer is
 * not the handshake. The socket closes when the test closes it, or with 1001 when the App closes.
 *
 * @example
 * const socket = await injectWebSocket(target, '/chat', {});
 */
export async function injectWebSocket(target: InjectTarget, path: string, options: InjectWebSocketOptions = {}): Promise<WebSocket> {
  const server = createHttpServer(target.config);
  server.on('request', target.handler);
  server.on('upgrade', target.upgrade);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // exclusive: a cluster worker's listen would otherwise share a handle through its primary
      server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const { WebSocket: Client } = createRequire(import.meta.url)('ws') as typeof import('ws');
    const url = `ws://127.0.0.1:${port}${path.startsWith('/') ? '' : '/'}${path}`;
    const socket = new Client(url, options.protocols ?? [], { headers: options.headers ?? {} });
    await opened(socket);
    return socket;
  } finally {
    // the listener only: the open socket lives on, detached from the server
    server.close();
  }
}

/** Resolves once the socket opens (its events held for a turn), rejects with the refusing answer or the socket's error. */
function opened(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.off('error', reject);
      // a message sent with the handshake's answer would be emitted before the caller's `await` resumes
      socket.pause();
      setImmediate(() => socket.resume());
      resolve();
    });
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        // the error terminate() emits (a handshake given up) goes to the listener below: this rejection comes first
        const refused = new Error(`the upgrade was answered ${res.statusCode ?? 0} ${res.statusMessage ?? ''}: ${body}`);
        reject(Object.assign(refused, { statusCode: res.statusCode ?? 0, headers: res.headers, body }));
        socket.terminate();
      });
    });
    socket.once('error', reject);
  });
}
