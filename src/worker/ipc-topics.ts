import type { TopicPayload, TopicTransport } from '../coordination/replica-topics.ts';
import { type DeliverMessage, msg, type WorkerMessage } from '../ipc/protocol.ts';
import { decodePayload, encodePayload } from '../utils/payload.ts';

/**
 * A cluster worker's topics: each `app.publish` goes to the primary (`flotilla:publish`), which hands
 * it to every worker, this one included (`flotilla:deliver`), in the order it received them; so a
 * publish reaches each subscribed socket of the cluster once, whichever worker holds it. Without the
 * primary (it is gone), a publish is dropped: delivery is at most once.
 *
 * @example
 * const topics = new IpcTopics((m) => process.send?.(m));
 * const app = new App(config, { topics });
 * process.on('message', (m) => { if (m.type === 'flotilla:deliver') topics.delivered(m) });
 */
export class IpcTopics implements TopicTransport {
  readonly #send: (message: WorkerMessage) => void;
  #deliver: (topic: string, payload: TopicPayload) => void = () => {};

  constructor(send: (message: WorkerMessage) => void) {
    this.#send = send;
  }

  publish(topic: string, payload: TopicPayload): void {
    const { data, binary } = encodePayload(payload);
    this.#send(msg.publish(topic, data, binary));
  }

  open(deliver: (topic: string, payload: TopicPayload) => void): void {
    this.#deliver = deliver;
  }

  /** A message the primary delivers. */
  delivered(message: DeliverMessage): void {
    this.#deliver(message.topic, decodePayload(message.data, message.binary));
  }
}
