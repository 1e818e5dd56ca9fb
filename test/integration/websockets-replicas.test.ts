import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml } from '../../tools/cluster-process.ts';
import { byMsg, CLI, tempFiles } from '../helpers/cluster.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';
import { openSocket } from '../helpers/websocket.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/websockets/service.ts', import.meta.url));

function replica(t: TestContext, url: string): ClusterProcess {
  const file = join(tempFiles(t, {}), 'app.yaml');
  writeFileSync(file, configYaml({ serviceName: 'ws-replicas', service: SERVICE, coordination: { url } }, {}));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => cluster.kill());
  return cluster;
}

function post(port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/news', method: 'POST', headers: { 'content-type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Two replicas (2 workers each) on one coordinator: a publish on one reaches the sockets of both, once. */
async function acrossReplicas(t: TestContext, url: string): Promise<void> {
  const replicas = [replica(t, url), replica(t, url)];
  await Promise.all(replicas.map((r) => r.ready()));
  await Promise.all(replicas.map((r) => r.waitFor(byMsg('publishes reach the other replicas through the coordinator'), 'the bus')));
  const sockets = [];
  for (const r of replicas) for (let i = 0; i < 4; i++) sockets.push(await openSocket(`ws://127.0.0.1:${r.appPort}/live`));
  await Promise.all(sockets.map((s) => s.received(1)));
  const large = 'L'.repeat(20_000); // past PostgreSQL's 8000-byte NOTIFY payload
  t.assert.strictEqual(await post((replicas[0] as ClusterProcess).appPort, 'one'), 204);
  t.assert.strictEqual(await post((replicas[0] as ClusterProcess).appPort, large), 204);
  t.assert.strictEqual(await post((replicas[1] as ClusterProcess).appPort, 'two'), 204);
  await Promise.all(sockets.map((s) => s.received(4, 15_000)));
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const socket of sockets) {
    const got = socket.messages.slice(1);
    t.assert.strictEqual(got.length, 3, 'each once');
    t.assert.deepStrictEqual(
      got.filter((m) => m !== 'two'),
      ['one', large],
      'in publish order',
    );
  }
  for (const socket of sockets) socket.socket.close();
}

test('two replicas on redis-server: one publish reaches the sockets of both', { skip: SKIP_WITHOUT_REDIS }, async (t: TestContext) => {
  const redis = await redisServer(t);
  await acrossReplicas(t, redis.url);
});

test('two replicas on PostgreSQL: one publish reaches the sockets of both, large ones too', {
  skip: SKIP_WITHOUT_POSTGRES,
}, async (t: TestContext) => {
  const pg = await postgresServer(t);
  await acrossReplicas(t, pg.url);
});
