import type { Socket } from 'node:net';
import type { ConnectionSource } from '../app/connection-source.ts';
import { answerOverloaded } from '../cluster/overloaded-reply.ts';

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
  #take: ((socket: Socket, head: Buffer | undefined) => boolean) | undefined;

  constructor(address: { host: string; port: number }, retryAfterS: number) {
    this.address = address;
    this.#retryAfterS = retryAfterS;
  }

  get ended(): Promise<void> {
    return this.#ended.promise;
  }

  open(take: (socket: Socket, head: Buffer | undefined) => boolean): void {
    this.#take = take;
  }

  /** A handed connection (`socket` undefined: its client left while it travelled); false when it was refused. */
  received(socket: Socket | undefined, head: string): boolean {
    if (socket === undefined) return true;
    const bytes = head === '' ? undefined : Buffer.from(head, 'base64');
    if (this.#take?.(socket, bytes) === true) return true;
    answerOverloaded(socket, { retryAfterS: this.#retryAfterS, ...(bytes === undefined ? {} : { head: bytes }) });
    return false;
  }

  /** No connection follows. */
  end(): void {
    this.#ended.resolve();
  }
}
