import { describe, type TestContext, test } from 'node:test';
import type { KConfig } from '../../../src/config/types.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { rawUpgrade } from '../../helpers/websocket.ts';

/** An App on 127.0.0.1:0 with one websocket route (`GET /live`) guarded by an `onRequest` hook; `reached` counts the upgrades that got past the CSRF check to the route. */
async function liveApp(t: TestContext, config: KConfig = {}) {
  const { app } = testApp(config);
  const reached = { hooks: 0, sockets: 0 };
  app.registerController(
    controller({
      method: 'GET',
      path: '/live',
      onRequest: [
        () => {
          reached.hooks++;
        },
      ],
      websocket: (socket) => {
        reached.sockets++;
        socket.close(1000);
      },
    }),
  );
  const port = await serve(t, app);
  return { port, reached, origin: `http://127.0.0.1:${port}` };
}

describe('a WebSocket upgrade obeys csrf as an unsafe method does', () => {
  test('from another site (Sec-Fetch-Site or, without it, Origin): a 403 problem before the handshake; the route never runs', async (t: TestContext) => {
    const { port, reached } = await liveApp(t);
    const refusals = [
      { 'Sec-Fetch-Site': 'cross-site', Origin: 'http://evil.example' },
      { Origin: 'http://evil.example' },
      { Origin: 'null' },
      // the sibling subdomain is another origin: refused, as a same-site POST is (only csrf.trustedOrigins let it in)
      { 'Sec-Fetch-Site': 'same-site', Origin: `http://blog.127.0.0.1:${port}` },
    ];
    for (const headers of refusals) {
      const answer = await rawUpgrade(port, '/live', headers);
      t.assert.strictEqual(answer.status, 403, JSON.stringify(headers));
      t.assert.strictEqual(answer.headers['content-type'], 'application/problem+json');
      t.assert.strictEqual(answer.headers['upgrade'], undefined, 'no handshake');
      const problem = JSON.parse(answer.body) as Record<string, unknown>;
      t.assert.strictEqual(problem['code'], 'CROSS_ORIGIN_REQUEST');
      t.assert.strictEqual(problem['status'], 403);
      t.assert.match(String(problem['detail']), /WebSocket upgrade/);
    }
    t.assert.deepStrictEqual(reached, { hooks: 0, sockets: 0 });
  });

  test('same origin (by Sec-Fetch-Site or by Origin), the typed URL (none) and a client with neither header: 101', async (t: TestContext) => {
    const { port, reached, origin } = await liveApp(t);
    const admitted = [
      { 'Sec-Fetch-Site': 'same-origin', Origin: origin },
      { Origin: origin },
      { Origin: origin.toUpperCase().replace('HTTP', 'http') },
      { 'Sec-Fetch-Site': 'none' },
      {},
    ];
    for (const headers of admitted) {
      const answer = await rawUpgrade(port, '/live', headers);
      t.assert.strictEqual(answer.status, 101, JSON.stringify(headers));
      t.assert.strictEqual(answer.headers['upgrade'], 'websocket');
    }
    t.assert.strictEqual(reached.hooks, admitted.length);
  });

  test('a trusted origin (csrf.trustedOrigins, cors.origins, in any case) passes; csrf.enabled: false lets every upgrade through', async (t: TestContext) => {
    const { port } = await liveApp(t, {
      csrf: { trustedOrigins: ['https://Admin.Example'] },
      cors: { origins: ['https://App.Example:8443'] },
    });
    for (const origin of ['https://admin.example', 'https://app.example:8443', 'HTTPS://ADMIN.example']) {
      const answer = await rawUpgrade(port, '/live', { 'Sec-Fetch-Site': 'cross-site', Origin: origin });
      t.assert.strictEqual(answer.status, 101, origin);
    }
    const otherPort = await rawUpgrade(port, '/live', { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://app.example' });
    t.assert.strictEqual(otherPort.status, 403, 'the port is part of the origin');

    const off = await liveApp(t, { csrf: { enabled: false } });
    const answer = await rawUpgrade(off.port, '/live', { 'Sec-Fetch-Site': 'cross-site', Origin: 'http://evil.example' });
    t.assert.strictEqual(answer.status, 101);
  });

  test('behind a trusted proxy, the host the client asked for (X-Forwarded-Host) is what Origin is compared with', async (t: TestContext) => {
    const viaProxy = {
      Host: 'svc.internal:3000',
      'X-Forwarded-Host': 'chat.example',
      'X-Forwarded-Proto': 'https',
      Origin: 'https://chat.example',
    };
    const trusted = await liveApp(t, { trustProxy: 1 });
    t.assert.strictEqual((await rawUpgrade(trusted.port, '/live', viaProxy)).status, 101);
    t.assert.strictEqual(
      (await rawUpgrade(trusted.port, '/live', { ...viaProxy, Origin: 'https://evil.example' })).status,
      403,
      'another origin is still refused',
    );
    const untrusted = await liveApp(t);
    t.assert.strictEqual(
      (await rawUpgrade(untrusted.port, '/live', viaProxy)).status,
      403,
      'without trustProxy, X-Forwarded-Host is not believed: the Host is svc.internal',
    );
  });
});

describe('426 Upgrade Required', () => {
  test('an unsupported Sec-WebSocket-Version: 426 with Upgrade: websocket and Sec-WebSocket-Version: 13', async (t: TestContext) => {
    const { port, reached } = await liveApp(t);
    for (const version of ['12', '7']) {
      const answer = await rawUpgrade(port, '/live', { 'Sec-WebSocket-Version': version });
      t.assert.strictEqual(answer.status, 426, version);
      t.assert.strictEqual(answer.headers['upgrade'], 'websocket');
      t.assert.strictEqual(answer.headers['sec-websocket-version'], '13');
      t.assert.match(answer.headers['connection'] ?? '', /^upgrade\b/i, 'Connection names the upgrade (RFC 9110 §7.8)');
      t.assert.strictEqual((JSON.parse(answer.body) as { code: string }).code, 'UPGRADE_REQUIRED');
    }
    t.assert.strictEqual(reached.sockets, 0);
  });

  test('a plain GET to a websocket-only route: 426 with Upgrade: websocket', async (t: TestContext) => {
    const { port } = await liveApp(t);
    const res = await fetch(`http://127.0.0.1:${port}/live`);
    t.assert.strictEqual(res.status, 426);
    t.assert.strictEqual(res.headers.get('upgrade'), 'websocket');
    t.assert.strictEqual(((await res.json()) as { code: string }).code, 'UPGRADE_REQUIRED');
  });
});
