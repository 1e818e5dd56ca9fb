import diagnostics from 'node:diagnostics_channel';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface SimpleResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on its own connection (`Connection: close`), body read in full. */
export function httpRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<SimpleResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A raw TCP connection to the server, for exact control over what is sent. */
export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
export function readUntilClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
}

/** Resolves with the text received so far once it contains `marker`. */
export function readUntil(socket: Socket, marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes(marker)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`connection closed before '${marker}' arrived; got: ${text}`)));
  });
}

/** Whether a new TCP connection to the port is refused. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * The server side of every connection accepted in this process from now on
 * (node:net's `net.server.socket` diagnostics channel), to count what a
 * server read (`bytesRead`) rather than what a client managed to write.
 */
export function watchAcceptedSockets(): { byClientPort(port: number): Socket | undefined; stop(): void } {
  // by the client's port, read when accepted: a closed socket no longer knows its peer
  const accepted = new Map<number | undefined, Socket>();
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    accepted.set(socket.remotePort, socket);
  };
  diagnostics.subscribe('net.server.socket', onSocket);
  return {
    byClientPort: (port) => accepted.get(port),
    stop: () => diagnostics.unsubscribe('net.server.socket', onSocket),
  };
}

/**
 * Sends `head`, then `bytes` of body in 16 KiB pieces (as chunks when
 * `chunked`), honouring backpressure, until the server closes the connection
 * (rejects after `timeoutMs`); the response and the client's port.
 */
export async function flood(
  port: number,
  head: string,
  options: { bytes: number; chunked?: boolean; timeoutMs?: number },
): Promise<{ response: string; clientPort: number }> {
  const socket = await openSocket(port);
  const clientPort = socket.localPort ?? 0;
  let response = '';
  socket.on('data', (chunk: Buffer) => {
    response += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    socket.destroy();
  }, options.timeoutMs ?? 10_000);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  const piece = Buffer.alloc(16 * 1024, 'a');
  const frame = options.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
  let written = 0;
  const pump = () => {
    while (written < options.bytes && !socket.destroyed) {
      written += piece.length;
      if (!socket.write(frame)) {
        socket.once('drain', pump);
        return;
      }
    }
  };
  pump();
  await closed;
  clearTimeout(timer);
  if (timedOut) throw new Error(`the server did not close the connection; got: ${response.slice(0, 200)}`);
  return { response, clientPort };
}
