import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient } from 'redis';
import { startCluster } from '../helpers/cluster.ts';
import { httpRequest } from '../helpers/http.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

/** The sessions fixture with `app.setSessionStore(<connect-redis or connect-pg-simple>)` (see its header). */
const SERVICE = fileURLToPath(new URL('../fixtures/session-stores/service.ts', import.meta.url));
const TTL_MS = 600_000;
const CONFIG = { service: SERVICE, cookies: { secrets: ['the-express-stores-secret-of-32+-chars'] }, sessions: { ttlMs: TTL_MS } };
/** How many fresh connections a read may take to have reached every worker. */
const ATTEMPTS = 200;

interface Answer {
  status: number;
  body: { user?: string | null; cart?: string[]; id?: string; pid?: number };
  cookie: string | undefined;
}

/** One request on its own connection (node:cluster hands each new connection to the next worker), with the session cookie. */
async function call(port: number, method: 'GET' | 'POST', path: string, cookie?: string): Promise<Answer> {
  const headers: Record<string, string> = method === 'POST' ? { 'content-length': '0' } : {};
  if (cookie !== undefined) headers['cookie'] = cookie;
  const res = await httpRequest(port, path, { method, headers });
  const all = res.headers['set-cookie'] ?? [];
  const line = (Array.isArray(all) ? all : [all]).find((c) => c.startsWith('sid='));
  return { status: res.status, body: JSON.parse(res.body) as Answer['body'], cookie: line?.split(';')[0] };
}

/** `GET /whoami` on fresh connections until both workers answered: every answer is `expected`. The pids that answered. */
async function readOnBoth(t: TestContext, port: number, cookie: string, expected: Answer['body']): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < ATTEMPTS && pids.size < 2; i++) {
    const { status, body } = await call(port, 'GET', '/whoami', cookie);
    t.assert.strictEqual(status, 200, JSON.stringify(body));
    t.assert.deepStrictEqual({ user: body.user, cart: body.cart }, expected, `read by ${body.pid}`);
    pids.add(body.pid as number);
  }
  if (pids.size < 2) throw new Error(`after ${ATTEMPTS} fresh connections only ${[...pids].join(', ')} answered`);
  return pids;
}

/**
 * A 2-worker cluster whose sessions are in `store` at `url`: a login written through one worker is
 * read through the other, a cart added through either, and a logout removes it for both; `held`
 * reads what the store itself holds under an id (the TTL it gave it, in ms, and the data).
 */
async function sharedAcrossWorkers(
  t: TestContext,
  store: 'redis' | 'postgres',
  url: string,
  held: (id: string) => Promise<{ ttlMs: number; data: unknown } | undefined>,
): Promise<void> {
  const cluster = await startCluster(t, { config: CONFIG, env: { FIXTURE_SESSION_STORE: store, FIXTURE_STORE_URL: url } }).ready(2, 30_000);
  const port = cluster.appPort;

  const login = await call(port, 'POST', '/login/ada');
  t.assert.strictEqual(login.status, 200, JSON.stringify(login.body));
  const cookie = login.cookie as string;
  const id = login.body.id as string;
  const kept = await held(id);
  t.assert.deepStrictEqual(kept?.data, { user: 'ada' }, `the ${store} store holds the session under its id`);
  // connect-pg-simple keeps whole seconds, rounded up
  t.assert.ok(kept.ttlMs > TTL_MS - 60_000 && kept.ttlMs <= TTL_MS + 1_000, `expiring sessions.ttlMs from the save (${kept.ttlMs} ms)`);

  const readers = await readOnBoth(t, port, cookie, { user: 'ada', cart: [] });
  t.assert.ok(
    [...readers].some((pid) => pid !== login.body.pid),
    'the other worker read what one wrote',
  );
  for (const item of ['apple', 'pear']) t.assert.strictEqual((await call(port, 'POST', `/cart/${item}`, cookie)).status, 200);
  await readOnBoth(t, port, cookie, { user: 'ada', cart: ['apple', 'pear'] });

  t.assert.strictEqual((await call(port, 'POST', '/logout', cookie)).status, 200);
  t.assert.strictEqual(await held(id), undefined, 'destroy() removed it from the store');
  await readOnBoth(t, port, cookie, { user: null, cart: [] });
}

test('connect-redis on a real Redis: a session written through one worker is read through the other', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 90_000,
}, async (t: TestContext) => {
  const redis = await redisServer(t);
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    await sharedAcrossWorkers(t, 'redis', redis.url, async (id) => {
      const key = `fixture:sess:${id}`;
      const json = await client.get(key);
      if (json === null) return undefined;
      return { ttlMs: await client.pTTL(key), data: (JSON.parse(json) as { data: unknown }).data };
    });
  } finally {
    // before the server stops (the test's `after`), or the client reports the closed socket as an error
    await client.close();
  }
});

test('connect-pg-simple on a real PostgreSQL: a session written through one worker is read through the other', {
  skip: SKIP_WITHOUT_POSTGRES,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await postgresServer(t);
  const db = new pg.Client({ connectionString: server.url });
  await db.connect();
  try {
    // the table connect-pg-simple documents, created once as a migration would (not by racing workers)
    const table = createRequire(import.meta.url).resolve('connect-pg-simple/table.sql');
    await db.query(readFileSync(table, 'utf8'));
    await sharedAcrossWorkers(t, 'postgres', server.url, async (id) => {
      const { rows } = await db.query<{ sess: { data: unknown }; ms: number }>(
        'SELECT sess, extract(epoch FROM expire - clock_timestamp()) * 1000 AS ms FROM session WHERE sid = $1',
        [id],
      );
      const row = rows[0];
      return row === undefined ? undefined : { ttlMs: Number(row.ms), data: row.sess.data };
    });
  } finally {
    await db.end(); // before the server stops
  }
});
