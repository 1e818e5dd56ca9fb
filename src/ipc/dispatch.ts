/**
 * A handler for each message type of the union `M`: each receives its own message type, and what came
 * with the message (`C`: the worker that sent it, the handle passed with it).
 *
 * @example
 * const handlers: Handlers<PrimaryMessage, unknown> = { 'flotilla:ping': (m) => send(msg.pong(m.seq, vitals.sample())), … };
 */
export type Handlers<M extends { type: string }, C = undefined> = {
  readonly [T in M['type']]: (message: Extract<M, { type: T }>, context: C) => void;
};

/** A handler for the messages one side receives but has nothing to do with (the service thread's share of the workers'). */
export const ignore = (): void => {};

/**
 * The one place a side handles the messages it receives: a map from message type to handler, every
 * type of `M` present (a new message fails the type check until its receiver handles it), each handler
 * typed for its own message. Call it with a message its guard accepted.
 *
 * @example
 * const fromPrimary = dispatcher<PrimaryMessage, unknown>({ 'flotilla:ping': (m) => …, 'flotilla:shutdown': (m) => …, … });
 * process.on('message', (m, handle) => { if (isPrimaryMessage(m)) fromPrimary(m, handle) });
 */
export function dispatcher<M extends { type: string }, C = undefined>(handlers: Handlers<M, C>): (message: M, context: C) => void {
  const byType = handlers as unknown as Record<string, (message: M, context: C) => void>;
  return (message, context) => byType[message.type]?.(message, context);
}
