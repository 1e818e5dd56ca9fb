import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

interface SocketState {
  served: boolean;
  active: number;
}

/**
 * The server's connections, as the shutdown needs them: idle keep-alive ones
 * are closed at once, while one that was accepted but has not sent its first
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

  constructor(server: Server) {
    this.#server = server;
    server.on('connection', (socket: Socket) => {
      this.#sockets.set(socket, { served: false, active: 0 });
      socket.once('close', () => {
        this.#sockets.delete(socket);
        this.#awaited.get(socket)?.();
      });
    });
    server.on('request', (req, res) => {
      const state = this.#sockets.get(req.socket);
      if (state === undefined) return;
      state.served = true;
      state.active++;
      this.#awaited.get(req.socket)?.();
      res.once('close', () => {
        state.active--;
        if (this.#draining && state.active === 0) req.socket.end();
      });
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
    for (const [socket, state] of this.#sockets) {
      if (!state.served) fresh.push(socket);
      else if (state.active === 0) socket.end();
    }
    if (fresh.length === 0) return;
    const settled = fresh.map((socket) => new Promise<void>((resolve) => this.#awaited.set(socket, resolve)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(settled),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    this.#awaited.clear();
    for (const socket of fresh) if (!this.#sockets.get(socket)?.served) socket.destroy();
  }
}
