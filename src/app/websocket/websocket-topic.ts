import { createError, describeValue } from '../../errors/flotilla-error.ts';

/** Longest topic name, in characters. */
export const MAX_TOPIC_LENGTH = 256;

/**
 * A topic name as `ctx.subscribe` and `app.publish` take it: a string of 1 to 256 characters.
 *
 * @example
 * checkTopic('books'); // 'books'
 */
export function checkTopic(topic: unknown): string {
  if (typeof topic !== 'string' || topic.length === 0 || topic.length > MAX_TOPIC_LENGTH)
    throw createError('FLO_ERR_BAD_TOPIC', { max: MAX_TOPIC_LENGTH, got: describeValue(topic) });
  return topic;
}
