import { connect } from 'node:net';
import { WebSocket } from 'ws';

/**
 * A `ws` client whose messages are queued from the start (a message sent with the handshake's
 * answer arrives before a listener attached after `open` would see it), and its close.
 */
export interface TestSocket {
  readonly socket: WebSocket;
  /** Messages received so far (text). */
  readonly messages: string[];
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
  /** Resolves once `count` messages have arrived. */
  received(count: number, timeoutMs?: number): Promise<string[]>;
}

/** Opens a socket; rejects with the HTTP status when the upgrade is refused. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const socket = new WebSocket(url, { headers });
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    messages.push(String(data));
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })),
  );
  const received = (count: number, timeoutMs = 10_000) =>
    new Promise<string[]>((resolve, reject) => {
      const check = () => {
        if (messages.length < count) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(messages.slice());
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${messages.length} of ${count} messages after ${timeoutMs} ms: ${JSON.stringify(messages.slice(-5))}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, messages, closed, received }));
    socket.once('unexpected-response', (_req, res) => {
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      res.resume();
      socket.terminate();
    });
    socket.once('error', reject);
  });
}

/** What became of a client socket's upgrade: the open socket, or the HTTP answer that refused it (status, headers, body). */
export type UpgradeOutcome = { socket: WebSocket } | { status: number; headers: Record<string, unknown>; body: string };

/** Resolves with the socket once it opens, or with the refusing answer; rejects on a socket error. */
export function upgradeOutcome(socket: WebSocket): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket }));
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    socket.once('error', reject);
  });
}

/** The answer to an upgrade request written byte by byte: its status, its headers (lower-case names) and its body. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Writes a WebSocket upgrade request for `path` on a fresh TCP connection (`Host: 127.0.0.1:<port>`,
 * `Sec-WebSocket-Version: 13` and a key unless `headers` says otherwise, a header given `undefined` is left
 * out) and reads the answer: a 101's head (the connection is then closed by the client), or any other
 * answer whole (the server closes the connection after it).
 */
export function rawUpgrade(port: number, path: string, headers: Record<string, string | undefined> = {}): Promise<RawAnswer> {
  const all: Record<string, string | undefined> = {
    Host: `127.0.0.1:${port}`,
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    ...headers,
  };
  const lines = Object.entries(all).flatMap(([name, value]) => (value === undefined ? [] : [`${name}: ${value}`]));
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`));
    let received = '';
    let settled = false;
    const parse = (text: string, end: number): RawAnswer => {
      const [statusLine = '', ...fields] = text.slice(0, end).split('\r\n');
      const parsed: Record<string, string> = {};
      for (const field of fields) {
        const colon = field.indexOf(':');
        parsed[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim();
      }
      return { status: Number(statusLine.split(' ')[1]), headers: parsed, body: text.slice(end + 4) };
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n\r\n');
      if (end !== -1 && received.startsWith('HTTP/1.1 101') && !settled) {
        settled = true;
        socket.destroy();
        resolve(parse(received, end));
      }
    });
    socket.on('end', () => {
      if (settled) return;
      settled = true;
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) reject(new Error(`no answer to the upgrade: ${JSON.stringify(received)}`));
      else resolve(parse(received, end));
    });
    socket.on('error', (error) => {
      if (!settled) reject(error);
    });
  });
}
