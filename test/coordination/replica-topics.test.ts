import { type TestContext, test } from 'node:test';
import { controller, serve, testApp } from '../helpers/app.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';
import { openSocket } from '../helpers/websocket.ts';

/** Two standalone Apps on one coordinator: a publish on either reaches the sockets of both, once each. */
async function twoReplicas(t: TestContext, url: string): Promise<void> {
  const replicas = [0, 1].map(() => {
    const { app, logs } = testApp({ serviceName: 'standalone-topics', coordination: { url } });
    app.registerController(controller({ method: 'GET', path: '/live', websocket: (_socket, ctx) => ctx.subscribe('news') }));
    return { app, logs };
  });
  const ports = await Promise.all(replicas.map(({ app }) => serve(t, app)));
  for (const { logs } of replicas)
    t.assert.ok(logs.lines.some((l) => l['msg'] === 'publishes reach the other replicas through the coordinator'));
  const sockets = await Promise.all(ports.map((port) => openSocket(`ws://127.0.0.1:${port}/live`)));
  replicas[0]?.app.publish('news', 'from 0');
  replicas[1]?.app.publish('news', 'from 1');
  await Promise.all(sockets.map((s) => s.received(2)));
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const socket of sockets) t.assert.deepStrictEqual([...socket.messages].sort(), ['from 0', 'from 1']);
  for (const socket of sockets) socket.socket.close();
}

test('standalone replicas on redis-server: a publish reaches both', { skip: SKIP_WITHOUT_REDIS }, async (t: TestContext) => {
  await twoReplicas(t, (await redisServer(t)).url);
});

test('standalone replicas on PostgreSQL: a publish reaches both', { skip: SKIP_WITHOUT_POSTGRES }, async (t: TestContext) => {
  await twoReplicas(t, (await postgresServer(t)).url);
});
