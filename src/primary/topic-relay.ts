import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { decodeEnvelope, encodeEnvelope } from '../coordination/topic-envelope.ts';
import { msg, type PublishMessage } from '../ipc/protocol.ts';

/** What the relay needs of the other replicas (`coordination.url`): see `Coordinator.broadcast`. */
export interface ReplicaBus {
  broadcast(message: string): Promise<void>;
}

/**
 * The primary's part of `app.publish` (ARCHITECTURE.md, "Topics"): a publish from a worker or from the
 * service thread is handed to every live worker (the publisher included), each of which sends it to
 * its subscribed sockets, and to the other replicas through the coordinator; what another replica
 * publishes is handed to every worker. IPC channels keep their order, so each publisher's messages
 * arrive in the order it published them. Nothing is kept or retried: at most once.
 *
 * @example
 * const relay = new TopicRelay(() => supervisor.liveWorkers, logger);
 * relay.published(message); // from a worker's flotilla:publish
 */
export class TopicRelay {
  readonly #workers: () => readonly Worker[];
  readonly #logger: Logger;
  /** This replica's name on the bus: its own broadcasts coming back are not delivered twice. */
  readonly #origin: string;
  #bus: ReplicaBus | undefined;

  constructor(workers: () => readonly Worker[], logger: Logger, origin: string) {
    this.#workers = workers;
    this.#logger = logger;
    this.#origin = origin;
  }

  /** From now on, publishes go to the other replicas too. */
  connect(bus: ReplicaBus): void {
    this.#bus = bus;
  }

  /** A publish of this replica (a worker's or the service thread's). */
  published(message: PublishMessage): void {
    this.#deliver(message.topic, message.data, message.binary);
    const bus = this.#bus;
    if (bus === undefined) return;
    const envelope = encodeEnvelope({ origin: this.#origin, topic: message.topic, data: message.data, binary: message.binary });
    bus.broadcast(envelope).catch((error: unknown) => {
      this.#logger.warn({ err: error, topic: message.topic }, 'publish not sent to the other replicas');
    });
  }

  /** A message from the bus: another replica's publish (this replica's own are skipped). */
  received(text: string): void {
    const envelope = decodeEnvelope(text);
    if (envelope === undefined) {
      this.#logger.warn('malformed publish from the coordinator dropped');
      return;
    }
    if (envelope.origin !== this.#origin) this.#deliver(envelope.topic, envelope.data, envelope.binary);
  }

  #deliver(topic: string, data: string, binary: boolean): void {
    const message = msg.deliver(topic, data, binary);
    for (const worker of this.#workers()) if (worker.isConnected()) worker.send(message);
  }
}
