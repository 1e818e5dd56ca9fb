import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { test } from 'node:test';
import { listen } from '../../src/utils/listen.ts';

test('listen resolves with the bound address and rejects with the listen error', async (t) => {
  const first = createServer();
  t.after(() => first.close());
  const address = await listen(first, 0, '127.0.0.1');
  assert.equal(address.host, '127.0.0.1');
  assert.ok(address.port > 0);
  const second = createServer();
  await assert.rejects(listen(second, address.port, '127.0.0.1'), { code: 'EADDRINUSE' });
});

test('reusePort: servers of their own on one port, side by side (SO_REUSEPORT)', {
  skip: process.platform !== 'linux' && 'SO_REUSEPORT balances on Linux only',
}, async (t) => {
  const servers: Server[] = [createServer(), createServer()];
  t.after(() => {
    for (const server of servers) server.close();
  });
  const { port } = await listen(servers[0] as Server, 0, '127.0.0.1', { reusePort: true });
  const second = await listen(servers[1] as Server, port, '127.0.0.1', { reusePort: true });
  assert.equal(second.port, port);
  // without it, the port is taken
  await assert.rejects(listen(createServer(), port, '127.0.0.1'), { code: 'EADDRINUSE' });
});
