import type { Socket } from 'node:net';

/** A waiting connection is read up to this many bytes (a request head); the rest stays in the kernel for the worker. */
const READ_LIMIT = 16_384;

/**
 * A connection accepted by the primary that waits for a worker (see
 * `distributor.ts`). It is read meanwhile, up to a request head: a client
 * that leaves is noticed (its end), a readiness probe is recognized (its
 * request line), and a 503 can be written and closed without a reset. What
 * was read travels with the hand-off.
 *
 * @example
 * const waiting = new WaitingConnection(socket, performance.now());
 * waiting.read(['/health'], () => drop(waiting)); … const head = waiting.handOver();
 */
export class WaitingConnection {
  readonly socket: Socket;
  /** When the primary accepted it (`performance.now()`). */
  readonly since: number;
  /** What was read while it waited. */
  readonly head: Buffer[] = [];
  #bytes = 0;
  /** A readiness probe (its request line names one of the priority paths): first out of the queue, never shed. */
  probe = false;

  constructor(socket: Socket, since: number) {
    this.socket = socket;
    this.since = since;
  }

  /** Starts reading; `left` is called once when the client ends or closes the connection, or it fails. */
  read(priorityPaths: readonly string[], left: () => void): void {
    const { socket } = this;
    let gone = false;
    const leave = () => {
      if (gone) return;
      gone = true;
      left();
      socket.destroy();
    };
    socket.on('data', (chunk: Buffer) => {
      if (this.head.length === 0) this.probe = isProbe(chunk, priorityPaths);
      this.head.push(chunk);
      this.#bytes += chunk.length;
      // the rest stays in the kernel's buffer for the worker; only an end is no longer noticed
      if (this.#bytes >= READ_LIMIT) stopReading(socket);
    });
    socket.once('end', leave);
    socket.once('close', leave);
    socket.on('error', leave);
    socket.resume();
  }

  /** Stops watching the connection (it is handed over or answered): the listeners `read` added go. */
  release(): void {
    this.socket.removeAllListeners('data').removeAllListeners('end').removeAllListeners('close');
  }

  /** Stops the reads and returns what was read, base64 (empty when nothing was), for `flotilla:connection`. */
  handOver(): string {
    const { socket } = this;
    // what a paused socket buffered goes along (reading it may start the handle's reads again, stopped right after)
    if (socket.readableLength > 0) for (let chunk = socket.read(); chunk !== null; chunk = socket.read()) this.head.push(chunk);
    stopReading(socket);
    return this.head.length === 0 ? '' : Buffer.concat(this.head).toString('base64');
  }
}

/** Whether a connection's first bytes are a GET or HEAD of one of `paths` (a readiness probe). */
function isProbe(chunk: Buffer, paths: readonly string[]): boolean {
  const line = chunk.subarray(0, 256).toString('latin1');
  const target = /^(?:GET|HEAD) ([^ ?]*)[ ?]/.exec(line)?.[1];
  return target !== undefined && paths.includes(target);
}

/**
 * Stops the primary's reads of a socket it hands over: the worker reads the
 * rest from the same kernel socket. A net.Socket keeps reading into its buffer
 * when paused; `readStop` on its handle is what net.Socket's own `pause` does
 * for sockets that must not read ahead.
 */
function stopReading(socket: Socket): void {
  socket.pause();
  const handle = (socket as unknown as { _handle?: { reading?: boolean; readStop?(): number } })._handle;
  if (handle?.reading === true && typeof handle.readStop === 'function') {
    handle.reading = false;
    handle.readStop();
  }
}
