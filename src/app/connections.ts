import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

interface SocketState {
  served: boolean;
  active: number;
}

/**
 * How long the drain lets requests already on their way over idle keep-alive
 * connections be read before closing those connections. They are then
 * answered (with `Connection: close`) instead of being cut by the close.
 */
const IDLE_SETTLE_MS = 20;

/**
 * The server's connections, as the shutdown and the timeouts need them (every
 * request passes through here on its way to the handler). On drain, idle
 * keep-alive connections are closed — after a few milliseconds in which
 * requests already sent on them are still read and answered — while one that was accepted but has not sent its first
 * request yet (a cluster hand-off racing the shutdown) gets a short grace to
 * send it — it is then answered with `Connection: close` — instead of being
 * reset. node:http's own `close()` resets both kinds alike.
 */
export class ConnectionTracker {
  readonly #server: Server;
  readonly #sockets = new Map<Socket, SocketState>();
  /** Fresh connections the drain waits for, and how to tell it they are settled. */
  readonly #awaited = new Map<Socket, () => void>();
  #draining = false;

  constructor(server: Server, handler: (req: IncomingMessage, res: ServerResponse) => void) {
    this.#server = server;
    server.on('connection', (socket: Socket) => {
      this.#sockets.set(socket, { served: false, active: 0 });
      socket.once('close', () => {
        this.#sockets.delete(socket);
        this.#awaited.get(socket)?.();
      });
    });
    server.on('timeout', (socket: Socket) => this.#timedOut(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      const state = this.#sockets.get(socket);
      if (state !== undefined) {
        state.served = true;
        state.active++;
        this.#awaited.get(socket)?.();
        res.once('close', () => {
          state.active--;
          if (this.#draining && state.active === 0) socket.end();
        });
      }
      handler(req, res);
    });
  }

  /**
   * Stops accepting connections and closes the idle keep-alive ones; resolves
   * once every fresh connection has sent its request or `graceMs` passed
   * (stragglers are then destroyed).
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    // net's close, not http's: http's would also reset the fresh connections.
    NetServer.prototype.close.call(this.#server);
    const fresh: Socket[] = [];
    for (const [socket, state] of this.#sockets) if (!state.served) fresh.push(socket);
    const settled = fresh.map((socket) => new Promise<void>((resolve) => this.#awaited.set(socket, resolve)));
    await delay(IDLE_SETTLE_MS);
    for (const [socket, state] of this.#sockets) if (state.served && state.active === 0) socket.end();
    if (fresh.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(settled),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, graceMs - IDLE_SETTLE_MS));
      }),
    ]);
    clearTimeout(timer);
    this.#awaited.clear();
    for (const socket of fresh) if (!this.#sockets.get(socket)?.served) socket.destroy();
  }

  /**
   * A connection that timed out with a response still being written (a client
   * that stopped reading) is reset, not closed: a FIN would queue behind the
   * unsent bytes and leave the kernel holding its send buffer — megabytes —
   * for as long as the peer keeps its window shut. An idle one (keep-alive
   * timeout) is closed politely, as node:http would.
   */
  #timedOut(socket: Socket): void {
    if ((this.#sockets.get(socket)?.active ?? 0) > 0 || socket.writableLength > 0) socket.resetAndDestroy();
    else socket.destroy();
  }
}
