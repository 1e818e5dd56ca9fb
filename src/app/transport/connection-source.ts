import type { Socket } from 'node:net';

/**
 * Where an App's connections come from when it binds no socket of its own:
 * in a cluster with `balancing: primary`, the primary accepts them and hands
 * them over (see src/worker/handed-connections.ts).
 *
 * @example
 * const source: ConnectionSource = { address, open: (take) => onHandOff(take), ended: primaryDone };
 */
export interface ConnectionSource {
  /** The address the connections were accepted on: what `app.ready()` resolves with. */
  readonly address: { host: string; port: number };
  /**
   * Called once, when the App starts serving: `take` serves a connection (`head`: bytes already read
   * from it, served first) and returns false once the App serves no more.
   */
  open(take: (socket: Socket, head: Buffer | undefined) => boolean): void;
  /** Resolves once no connection follows: the drain waits for it before closing the App's doors. */
  readonly ended: Promise<void>;
}
