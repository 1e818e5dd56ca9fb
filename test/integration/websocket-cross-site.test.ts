import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml } from '../../tools/cluster-process.ts';
import { CLI, tempFiles } from '../helpers/cluster.ts';
import { type RawAnswer, rawUpgrade } from '../helpers/websocket.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/websockets/service.ts', import.meta.url));
/** Each case this many times, each on a connection of its own: the workers take turns, and each must answer alike. */
const TIMES = 4;

async function upgrades(port: number, headers: Record<string, string>): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  for (let i = 0; i < TIMES; i++) answers.push(await rawUpgrade(port, '/live', headers));
  return answers;
}

test('a 2-worker cluster: cross-site upgrades are 403 before the handshake; same origin, trusted and non-browser ones open', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  writeFileSync(
    file,
    configYaml(
      { serviceName: 'ws-csrf', service: SERVICE, logging: { requests: false } },
      { csrf: { trustedOrigins: ['https://admin.example'] } },
    ),
  );
  const cluster = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => cluster.kill());
  const { appPort: port } = await cluster.ready();
  const self = `http://127.0.0.1:${port}`;

  const refused = {
    'a foreign origin': { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
    'a foreign origin, no Sec-Fetch-Site': { Origin: 'http://evil.example' },
    'a sibling subdomain (same-site)': { Origin: `http://chat.127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-site' },
  };
  for (const [what, headers] of Object.entries(refused)) {
    for (const answer of await upgrades(port, headers)) {
      t.assert.strictEqual(answer.status, 403, what);
      t.assert.strictEqual(answer.headers['content-type'], 'application/problem+json', what);
      t.assert.strictEqual((JSON.parse(answer.body) as { code: string }).code, 'CROSS_ORIGIN_REQUEST', what);
    }
  }

  const opened = {
    'the same origin': { Origin: self, 'Sec-Fetch-Site': 'same-origin' },
    'a trusted origin': { Origin: 'https://admin.example', 'Sec-Fetch-Site': 'cross-site' },
    'no Origin, no Sec-Fetch-Site (not a browser)': {},
  };
  for (const [what, headers] of Object.entries(opened)) {
    for (const answer of await upgrades(port, headers)) {
      t.assert.strictEqual(answer.status, 101, `${what}: ${answer.body}`);
      t.assert.strictEqual(answer.headers['upgrade'], 'websocket', what);
    }
  }

  for (const answer of await upgrades(port, { 'Sec-WebSocket-Version': '12' })) {
    t.assert.strictEqual(answer.status, 426);
    t.assert.strictEqual(answer.headers['upgrade'], 'websocket');
    t.assert.strictEqual(answer.headers['sec-websocket-version'], '13');
  }
});
