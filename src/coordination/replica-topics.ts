import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';
import { decodePayload, encodePayload } from '../utils/payload.ts';
import type { Coordinator } from './coordinator.ts';
import { openCoordinator } from './start.ts';
import { decodeEnvelope, encodeEnvelope } from './topic-envelope.ts';

/**
 * A standalone App's topics with `coordination.url`: a publish is delivered to the App's own sockets
 * at once and broadcast to the other replicas through the coordinator; theirs are delivered here.
 * The coordinator is opened when the App listens and closed after its shutdown hooks; what is
 * published before it is open reaches this App's sockets only (at most once).
 *
 * @example
 * const topics = new ReplicaTopics(config, logger);
 * const app = new App(config, { topics }); // the App starts and closes it
 */
export class ReplicaTopics implements TopicTransport {
  readonly #config: ResolvedConfig;
  readonly #logger: Logger;
  readonly #origin = `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  #deliver: (topic: string, payload: TopicPayload) => void = () => {};
  #coordinator: Coordinator | undefined;

  constructor(config: ResolvedConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger.child({ component: 'topics' });
  }

  publish(topic: string, payload: TopicPayload): void {
    this.#deliver(topic, payload);
    const coordinator = this.#coordinator;
    if (coordinator === undefined) return;
    const { data, binary } = encodePayload(payload);
    coordinator.broadcast(encodeEnvelope({ origin: this.#origin, topic, data, binary })).catch((error: unknown) => {
      this.#logger.warn({ err: error, topic }, 'publish not sent to the other replicas');
    });
  }

  open(deliver: (topic: string, payload: TopicPayload) => void): void {
    this.#deliver = deliver;
  }

  /** Opens the coordinator and listens to the other replicas' publishes. */
  async start(): Promise<void> {
    const { coordinator } = await openCoordinator(this.#config, this.#logger, () => {});
    await coordinator.listen((text) => {
      const envelope = decodeEnvelope(text);
      if (envelope === undefined) this.#logger.warn('malformed publish from the coordinator dropped');
      else if (envelope.origin !== this.#origin) this.#deliver(envelope.topic, decodePayload(envelope.data, envelope.binary));
    });
    this.#coordinator = coordinator;
    this.#logger.info('publishes reach the other replicas through the coordinator');
  }

  async close(): Promise<void> {
    const coordinator = this.#coordinator;
    this.#coordinator = undefined;
    await coordinator?.close();
  }
}

/** A published message as it is delivered: a string is sent as a text frame, bytes as a binary one. */
export type TopicPayload = string | Buffer;

/**
 * How `app.publish` reaches every process that holds sockets: a standalone App delivers to its own
 * (`localTopics`); a cluster worker sends each publish to the primary, which hands it to every
 * worker, itself included, and to the other replicas (src/worker/ipc-topics.ts).
 *
 * @example
 * const transport: TopicTransport = { publish: (topic, payload) => send(topic, payload), open: (deliver) => onDelivery(deliver) };
 */
export interface TopicTransport {
  /** Sends a publish on its way; what comes back is delivered through `open`'s `deliver`, in publish order. */
  publish(topic: string, payload: TopicPayload): void;
  /** Called once by the App: `deliver` sends a message to the App's sockets subscribed to its topic. */
  open(deliver: (topic: string, payload: TopicPayload) => void): void;
}
