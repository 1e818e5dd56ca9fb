import { Socket } from 'node:net';
import type { ConnectionSource } from '../app/index.ts';
import { answerOverloaded } from '../process/overloaded-reply.ts';

/**
 * The worker's end of the primary's connection hand-off (`cluster.balancing:
 * primary`, see src/primary/distributor.ts): each `flotilla:connection`
 * brings a socket the App serves as if it had accepted it; one the App no
 * longer takes (it has closed) is answered 503 here. `flotilla:handoff-end`,
 * or the primary's disconnection, ends the source: the App's drain waits for
 * it, so a connection the primary still had queued at the shutdown is served.
 *
 * @example
 * const handed = new HandedConnections({ host, port }, 1);
 * const app = new App(config, { connections: handed });
 * process.on('message', (m, socket) => send(msg.handoffAck(handed.received(socket, m.head))));
 */
export class HandedConnections implements ConnectionSource {
  readonly address: { host: string; port: number };
  readonly #ended = Promise.withResolvers<void>();
  readonly #retryAfterS: number;
  readonly #headers: string;
  #take: ((socket: Socket, head: Buffer | undefined) => boolean) | undefined;

  /** `headers`: raw head lines of the 503 (the security headers, `headerLines`). */
  constructor(address: { host: string; port: number }, retryAfterS: number, headers = '') {
    this.address = address;
    this.#retryAfterS = retryAfterS;
    this.#headers = headers;
  }

  get ended(): Promise<void> {
    return this.#ended.promise;
  }

  open(take: (socket: Socket, head: Buffer | undefined) => boolean): void {
    this.#take = take;
  }

  /**
   * A handed connection: a net.Socket, or the raw handle of one the primary handed on as it accepted it
   * (`undefined`: its client left while it travelled); false when it was refused.
   */
  received(handle: unknown, head: string): boolean {
    const socket = socketOf(handle);
    if (socket === undefined) return true;
    const bytes = head === '' ? undefined : Buffer.from(head, 'base64');
    if (this.#take?.(socket, bytes) === true) return true;
    answerOverloaded(socket, { retryAfterS: this.#retryAfterS, headers: this.#headers, ...(bytes === undefined ? {} : { head: bytes }) });
    return false;
  }

  /** No connection follows. */
  end(): void {
    this.#ended.resolve();
  }
}

/** The socket of what came with a hand-off: node makes a net.Socket of a socket sent as one, and leaves a raw handle raw. */
function socketOf(handle: unknown): Socket | undefined {
  if (handle instanceof Socket || handle === undefined || handle === null) return handle ?? undefined;
  return new Socket({ handle, readable: true, writable: true } as never);
}

/** Closes what came with a message that is not served (a malformed one, or no hand-off expected). */
export function dropHandle(handle: unknown): void {
  if (handle instanceof Socket) handle.destroy();
  else if (typeof (handle as { close?: unknown } | null)?.close === 'function') (handle as { close(): void }).close();
}
