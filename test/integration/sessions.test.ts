import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ClusterProcess } from '../../tools/cluster-process.ts';
import { byMsg, startCluster } from '../helpers/cluster.ts';
import { httpRequest, type SimpleResponse } from '../helpers/http.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

/** `POST /login/:user`, `GET /whoami`, `POST /logout`, `POST /cart/:item`, each answering with the worker's pid (see its header). */
const SERVICE = fileURLToPath(new URL('../fixtures/sessions/service.ts', import.meta.url));
/** What every cluster here runs: the fixture, and the secret its session cookies are signed with. */
const BASE = { service: SERVICE, cookies: { secrets: ['the-sessions-integration-secret-of-32+-chars'] } };
/** How many fresh connections a read may take to have reached every worker of a cluster. */
const ATTEMPTS = 200;

/** The session cookie a response sets: its `sid=<value>` (what a client sends back) and its attributes. */
interface SetCookie {
  pair: string;
  attributes: string;
}

/** An answer of the fixture: status, headers, the JSON body, and the session cookie it set, if any. */
interface Answer {
  status: number;
  headers: SimpleResponse['headers'];
  body: { user?: string | null; cart?: string[]; id?: string; pid?: number; code?: string };
  cookie: SetCookie | undefined;
}

/** One request on its own connection (node:cluster hands each new connection to the next worker), with the session cookie `cookie`. */
async function call(port: number, method: 'GET' | 'POST', path: string, cookie?: SetCookie): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (cookie !== undefined) headers['cookie'] = cookie.pair;
  if (method === 'POST') headers['content-length'] = '0';
  const response = await httpRequest(port, path, { method, headers });
  const all = response.headers['set-cookie'] ?? [];
  const line = (Array.isArray(all) ? all : [all]).find((c) => c.startsWith('sid='));
  const [pair = '', ...attributes] = line?.split('; ') ?? [];
  let body: Answer['body'];
  try {
    body = JSON.parse(response.body) as Answer['body'];
  } catch {
    throw new Error(`${method} ${path} answered ${response.status} with a body that is not JSON: ${response.body}`);
  }
  return {
    status: response.status,
    headers: response.headers,
    body,
    cookie: line === undefined ? undefined : { pair, attributes: attributes.join('; ') },
  };
}

/** `POST /login/:user` (with the cookie of a session to regenerate): 200, and the new session's cookie naming its id. */
async function login(
  t: TestContext,
  port: number,
  user: string,
  cookie?: SetCookie,
): Promise<{ cookie: SetCookie; id: string; pid: number }> {
  const answer = await call(port, 'POST', `/login/${user}`, cookie);
  t.assert.equal(answer.status, 200, `login of ${user}: ${JSON.stringify(answer.body)}`);
  const { id, pid } = answer.body as { id: string; pid: number };
  t.assert.ok(answer.cookie !== undefined, 'the login sets the session cookie');
  t.assert.match(answer.cookie.pair, /^sid=[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]+$/, 'an id and its signature');
  t.assert.ok(answer.cookie.pair.startsWith(`sid=${id}.`), 'the cookie carries the session id');
  return { cookie: answer.cookie, id, pid };
}

/**
 * `GET /whoami` with `cookie` on fresh connections until each of `pids` has answered (at most
 * `ATTEMPTS` requests); every answer is 200 and passes `check`. The pids that answered.
 */
async function readOnEvery(port: number, pids: Iterable<number>, cookie: SetCookie, check: (answer: Answer) => void): Promise<Set<number>> {
  const wanted = new Set(pids);
  const answered = new Set<number>();
  for (let i = 0; i < ATTEMPTS && answered.size < wanted.size; i++) {
    const answer = await call(port, 'GET', '/whoami', cookie);
    if (answer.status !== 200) throw new Error(`GET /whoami answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    check(answer);
    const pid = answer.body.pid as number;
    if (wanted.has(pid)) answered.add(pid);
  }
  if (answered.size < wanted.size)
    throw new Error(`after ${ATTEMPTS} fresh connections only ${[...answered].join(', ')} of ${[...wanted].join(', ')} answered`);
  return answered;
}

/** Checks of a `GET /whoami` answer: the session read is `user`'s with `cart`, under the id `id`. */
function sessionOf(t: TestContext, user: string, cart: string[], id: string): (answer: Answer) => void {
  return (answer) => {
    t.assert.deepStrictEqual(
      { user: answer.body.user, cart: answer.body.cart, id: answer.body.id },
      { user, cart, id },
      `read by ${answer.body.pid}`,
    );
  };
}

/** Checks of a `GET /whoami` answer with a cookie the store no longer knows: an empty new session, and the stale cookie cleared. */
function noSession(t: TestContext, oldId: string): (answer: Answer) => void {
  return (answer) => {
    t.assert.equal(answer.body.user, null, `read by ${answer.body.pid}`);
    t.assert.deepStrictEqual(answer.body.cart, []);
    t.assert.notEqual(answer.body.id, oldId, 'a new session, not the old id');
    t.assert.equal(answer.cookie?.pair, 'sid=', 'the stale cookie is cleared');
    t.assert.match(answer.cookie?.attributes ?? '', /Expires=Thu, 01 Jan 1970/);
  };
}

/** A `POST /logout` answer: 200, and the cookie cleared (empty, expired in 1970). */
function assertCleared(t: TestContext, answer: Answer): void {
  t.assert.equal(answer.status, 200, JSON.stringify(answer.body));
  t.assert.equal(answer.cookie?.pair, 'sid=', 'the cookie is emptied');
  t.assert.match(answer.cookie?.attributes ?? '', /Expires=Thu, 01 Jan 1970/, 'and expired');
}

/** A 503 `SESSION_STORE_UNAVAILABLE` problem with `Retry-After`, and no session cookie. */
function assertUnavailable(t: TestContext, answer: Answer, what: string): void {
  t.assert.equal(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
  t.assert.equal(answer.headers['content-type'], 'application/problem+json', what);
  t.assert.equal(answer.body.code, 'SESSION_STORE_UNAVAILABLE', what);
  const retryAfter = Number(answer.headers['retry-after']);
  t.assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `${what}: Retry-After ${answer.headers['retry-after']}`);
  t.assert.equal(answer.cookie, undefined, `${what}: no session cookie`);
}

test('memory store, 2 workers, fresh connections: a login one worker wrote is read by the other; regenerate() moves the data to a new id and the old one reads empty; destroy() clears the cookie and the session', {
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: BASE }).ready(2, 30_000);
  const port = cluster.appPort;
  const workers = [...cluster.workers.values()];

  const ada = await login(t, port, 'ada');
  const readers = await readOnEvery(port, workers, ada.cookie, sessionOf(t, 'ada', [], ada.id));
  t.assert.ok(
    [...readers].some((pid) => pid !== ada.pid),
    `the session written by ${ada.pid} was read by another worker (${[...readers].join(', ')})`,
  );

  // data written by one worker, added to through any
  for (const item of ['apple', 'pear']) {
    const added = await call(port, 'POST', `/cart/${item}`, ada.cookie);
    t.assert.equal(added.status, 200);
    t.assert.equal(added.body.id, ada.id, 'the same session');
  }
  await readOnEvery(port, workers, ada.cookie, sessionOf(t, 'ada', ['apple', 'pear'], ada.id));

  // regenerate(): logging in again with the old cookie gives a new id and keeps the data (the cart)
  const grace = await login(t, port, 'grace', ada.cookie);
  t.assert.notEqual(grace.cookie.pair, ada.cookie.pair, 'a new cookie');
  t.assert.notEqual(grace.id, ada.id, 'a new id');
  await readOnEvery(port, workers, grace.cookie, sessionOf(t, 'grace', ['apple', 'pear'], grace.id));
  await readOnEvery(port, workers, ada.cookie, noSession(t, ada.id));

  // destroy(): the cookie cleared, and the session gone for every worker
  assertCleared(t, await call(port, 'POST', '/logout', grace.cookie));
  await readOnEvery(port, workers, grace.cookie, noSession(t, grace.id));
});

test('memory store: every worker killed with SIGKILL in turn, the writer included, is replaced and no session is lost', {
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: BASE }).ready(2, 30_000);
  const port = cluster.appPort;
  const live = new Map(cluster.workers);

  const ada = await login(t, port, 'ada');
  t.assert.equal((await call(port, 'POST', '/cart/apple', ada.cookie)).status, 200);
  // the writer first: then the other
  const slots = [...live.keys()].sort((a, b) => Number(live.get(b) === ada.pid) - Number(live.get(a) === ada.pid));
  for (const slot of slots) {
    const victim = live.get(slot) as number;
    process.kill(victim, 'SIGKILL');
    await cluster.waitFor(byMsg('worker exited unexpectedly: replacing it', { workerPid: victim }), `the death of ${victim}`, 30_000);
    const up = await cluster.waitFor(
      (l) => l.msg === 'worker listening' && l['slot'] === slot && l['workerPid'] !== victim,
      `the replacement of ${victim} in slot ${slot}`,
      30_000,
    );
    live.set(slot, up['workerPid'] as number);
    await readOnEvery(port, live.values(), ada.cookie, sessionOf(t, 'ada', ['apple'], ada.id));
  }
  const first = new Set(cluster.workers.values());
  t.assert.ok(
    [...live.values()].every((pid) => !first.has(pid)),
    'every worker that was up at the login has been replaced',
  );
  t.diagnostic(`written by ${ada.pid}; read after the kills by ${[...live.values()].join(', ')}`);
});

/** Two replicas (clusters of 2 workers) of one service whose sessions are kept at one coordinator: one session between them. */
async function replicasShare(t: TestContext, url: string, name: string): Promise<void> {
  const config = { ...BASE, serviceName: `sessions-${name}`, coordination: { url }, sessions: { store: 'coordination' } };
  const [a, b] = [startCluster(t, { config }), startCluster(t, { config })] as [ClusterProcess, ClusterProcess];
  await Promise.all([a.ready(2, 30_000), b.ready(2, 30_000)]);

  // logged in on A, read on B
  const ada = await login(t, a.appPort, 'ada');
  t.assert.ok([...a.workers.values()].includes(ada.pid), 'the login was answered by replica A');
  await readOnEvery(b.appPort, b.workers.values(), ada.cookie, sessionOf(t, 'ada', [], ada.id));
  t.assert.equal((await call(b.appPort, 'POST', '/cart/apple', ada.cookie)).status, 200);
  await readOnEvery(a.appPort, a.workers.values(), ada.cookie, sessionOf(t, 'ada', ['apple'], ada.id));

  // regenerated on B: the new id read on A, the old one gone there
  const grace = await login(t, b.appPort, 'grace', ada.cookie);
  t.assert.ok([...b.workers.values()].includes(grace.pid), 'the new login was answered by replica B');
  t.assert.notEqual(grace.id, ada.id);
  await readOnEvery(a.appPort, a.workers.values(), grace.cookie, sessionOf(t, 'grace', ['apple'], grace.id));
  await readOnEvery(a.appPort, a.workers.values(), ada.cookie, noSession(t, ada.id));

  // destroyed on A: gone on B
  assertCleared(t, await call(a.appPort, 'POST', '/logout', grace.cookie));
  await readOnEvery(b.appPort, b.workers.values(), grace.cookie, noSession(t, grace.id));
}

test('two replicas on a throwaway redis-server share sessions: logged in on A, read on B; regenerated on B, the old id gone on A; destroyed on A, gone on B', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await redisServer(t);
  await replicasShare(t, server.url, 'redis');
});

test('two replicas on a throwaway PostgreSQL share sessions: logged in on A, read on B; regenerated on B, the old id gone on A; destroyed on A, gone on B', {
  skip: SKIP_WITHOUT_POSTGRES,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await postgresServer(t);
  await replicasShare(t, server.url, 'postgres');
});

test('Redis down: reading a session and logging in answer 503 SESSION_STORE_UNAVAILABLE with Retry-After, never an empty session; a login works again once it is back', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await redisServer(t);
  const cluster = await startCluster(t, {
    config: { ...BASE, serviceName: 'sessions-down', coordination: { url: server.url }, sessions: { store: 'coordination' } },
  }).ready(2, 30_000);
  const port = cluster.appPort;
  const workers = [...cluster.workers.values()];
  const ada = await login(t, port, 'ada');
  await readOnEvery(port, workers, ada.cookie, sessionOf(t, 'ada', [], ada.id));

  await server.stop();
  // fresh connections: both workers, each asking the primary, which cannot reach Redis
  for (let i = 0; i < 4; i++) {
    assertUnavailable(t, await call(port, 'GET', '/whoami', ada.cookie), 'GET /whoami with the session cookie');
    assertUnavailable(t, await call(port, 'POST', '/login/grace'), 'POST /login without a cookie');
    assertUnavailable(t, await call(port, 'POST', '/login/grace', ada.cookie), 'POST /login with the session cookie');
    assertUnavailable(t, await call(port, 'POST', '/logout', ada.cookie), 'POST /logout');
  }

  await server.start();
  // the primary's client reconnects with backoff (at most 1 s between attempts); meanwhile still 503, never anything else
  let back: Answer | undefined;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(200)) {
    back = await call(port, 'POST', '/login/grace');
    if (back.status === 200) break;
    assertUnavailable(t, back, 'POST /login while the client reconnects');
  }
  t.assert.equal(back?.status, 200, 'a login works again once Redis is back');
  const grace = { cookie: back?.cookie as SetCookie, id: back?.body.id as string };
  t.assert.ok(grace.cookie?.pair.startsWith(`sid=${grace.id}.`), 'the new session cookie');
  await readOnEvery(port, workers, grace.cookie, sessionOf(t, 'grace', [], grace.id));
  // the restarted Redis kept nothing (no persistence): the old cookie is an empty session now, answered 200
  await readOnEvery(port, workers, ada.cookie, noSession(t, ada.id));
});
