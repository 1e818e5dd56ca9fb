import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { workerPort } from '../../src/primary/worker-port.ts';

const listenReusePort = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', reusePort: true }, () => resolve(server));
  });

test('the configured port is kept when it is free and not 0, or when node:cluster shares one socket', async () => {
  const free = await workerPort({ port: 0, host: '127.0.0.1' }, true);
  assert.equal(await workerPort({ port: free ?? 0, host: '127.0.0.1' }, true), free);
  assert.equal(await workerPort({ port: 0, host: '127.0.0.1' }, false), 0);
});

test('a fixed port held by a SO_REUSEPORT socket (another kernel-balanced cluster) is in use: undefined', {
  skip: process.platform !== 'linux' && 'SO_REUSEPORT balances on Linux only',
}, async (t) => {
  const holder = await listenReusePort(0);
  t.after(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  assert.equal(await workerPort({ port, host: '127.0.0.1' }, true), undefined);
  assert.equal(await workerPort({ port, host: '127.0.0.1' }, false), port, 'node:cluster reports it itself');
});

test('port 0 with sockets of their own: one free port, which every worker can bind with SO_REUSEPORT', {
  skip: process.platform !== 'linux' && 'SO_REUSEPORT balances on Linux only',
}, async (t) => {
  const port = (await workerPort({ port: 0, host: '127.0.0.1' }, true)) ?? 0;
  assert.ok(port > 0);
  const servers = [await listenReusePort(port), await listenReusePort(port)];
  t.after(() => {
    for (const server of servers) server.close();
  });
  for (const server of servers) assert.equal((server.address() as { port: number }).port, port);
});

test('a host that cannot be bound leaves the port at 0: the workers then report the error', async () => {
  assert.equal(await workerPort({ port: 0, host: '192.0.2.1' }, true), 0);
});
