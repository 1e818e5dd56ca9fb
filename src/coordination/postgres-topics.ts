import { createHash } from 'node:crypto';
import type { Client, ClientConfig, Pool } from 'pg';
import { backoffMs, type CoordinatorOptions, describeError } from './coordinator.ts';

/** The stored messages too large for a notification's payload. */
export const MESSAGES_SCHEMA = `
CREATE TABLE IF NOT EXISTS flotilla_messages (
  id bigserial PRIMARY KEY,
  service text NOT NULL,
  payload text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`;

/**
 * PostgreSQL refuses a NOTIFY payload of 8000 bytes or more: a message up to this many bytes travels
 * in the notification (`=` + message), a larger one is stored in `flotilla_messages` and the
 * notification carries its id (`#` + id); listeners read it from there.
 */
export const INLINE_BYTES = 7_900;
const STORE = `WITH m AS (INSERT INTO flotilla_messages (service, payload) VALUES ($1, $2) RETURNING id)
SELECT pg_notify($3, '#' || id) FROM m`;
/** Stored messages are kept this long: every listener has read them by then, or missed them (at most once). */
const KEEP_MS = 60_000;
const PRUNE = `DELETE FROM flotilla_messages WHERE service = $1 AND sent_at < clock_timestamp() - make_interval(secs => $2::float8 / 1000)`;

/**
 * `app.publish` across replicas on PostgreSQL: `pg_notify` on a channel of the service's, `LISTEN` on a
 * connection of its own (reconnected with backoff, listening again). A replica's broadcasts are sent one
 * after the other and read in order, a stored one included, so each replica's order is kept.
 *
 * @example
 * const topics = postgresTopics(pg, config, options, pool, ensureSchema);
 * await topics.listen((message) => relay.received(message));
 */
export function postgresTopics(
  pg: typeof import('pg'),
  config: ClientConfig,
  o: CoordinatorOptions,
  pool: Pool,
  ensureSchema: () => Promise<void>,
): { broadcast(message: string): Promise<void>; listen(onMessage: (message: string) => void): Promise<void>; close(): Promise<void> } {
  // a LISTEN channel is an identifier of at most 63 bytes: the service's name hashed
  const channel = `flotilla_topics_${createHash('sha1').update(o.service).digest('hex').slice(0, 16)}`;
  let sending: Promise<unknown> = Promise.resolve();
  let reading: Promise<unknown> = Promise.resolve();
  let listener: Client | undefined;
  let closed = false;
  let prunedAt = 0;

  const send = async (message: string): Promise<void> => {
    if (Buffer.byteLength(message) <= INLINE_BYTES) {
      await pool.query('SELECT pg_notify($1, $2)', [channel, `=${message}`]);
      return;
    }
    await ensureSchema();
    await pool.query(STORE, [o.service, message, channel]);
    if (Date.now() - prunedAt > KEEP_MS) {
      prunedAt = Date.now();
      pool
        .query(PRUNE, [o.service, KEEP_MS])
        .catch((error: unknown) => o.logger.debug({ error: describeError(error) }, 'pruning stored messages failed'));
    }
  };

  const read = async (payload: string, onMessage: (message: string) => void): Promise<void> => {
    if (payload.startsWith('=')) {
      onMessage(payload.slice(1));
      return;
    }
    if (!payload.startsWith('#')) return;
    const { rows } = await pool.query<{ payload: string }>('SELECT payload FROM flotilla_messages WHERE id = $1', [payload.slice(1)]);
    if (rows[0] !== undefined) onMessage(rows[0].payload);
  };

  const connect = async (onMessage: (message: string) => void, attempt: number): Promise<void> => {
    if (closed) return;
    const client = new pg.Client({ ...config, application_name: `flotilla ${o.service} topics`, query_timeout: undefined });
    const retry = (error: unknown) => {
      if (listener !== client || closed) return;
      listener = undefined;
      o.logger.warn({ error: describeError(error) }, 'topic listener disconnected: listening again');
      client.end().catch(() => {});
      setTimeout(() => void connect(onMessage, attempt + 1), backoffMs(attempt, 5_000)).unref();
    };
    listener = client;
    client.on('error', retry);
    client.on('end', () => retry(new Error('connection ended')));
    client.on('notification', (n) => {
      if (n.channel !== channel || n.payload === undefined) return;
      const payload = n.payload;
      reading = reading
        .then(() => read(payload, onMessage))
        .catch((error: unknown) => o.logger.warn({ error: describeError(error) }, 'a stored message could not be read: dropped'));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      retry(error);
    }
  };

  return {
    broadcast(message) {
      const sent = sending.then(() => send(message));
      sending = sent.catch(() => {});
      return sent;
    },
    listen: (onMessage) => connect(onMessage, 0),
    async close() {
      closed = true;
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => {});
    },
  };
}
