import { request } from 'node:http';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../helpers/cluster.ts';
import { nginx, SKIP_WITHOUT_NGINX } from '../helpers/nginx.ts';

/** `GET /whoami` and `GET /limited` (5 a minute per client) answer `ctx.ip`, `ctx.protocol`, `ctx.host`. */
const SERVICE = fileURLToPath(new URL('../fixtures/proxy/service.ts', import.meta.url));

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One GET through nginx on its own connection, from the loopback address `from` (127.0.0.2, …: each
 * is a client of its own, none of them nginx's 127.0.0.1), with `Host: shop.example`.
 */
function get(port: number, path: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, localAddress: from, agent: false, headers: { host: `shop.example:${port}`, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** What a client's answer says of it, the worker's pid left out. */
function client(answer: Answer): Record<string, unknown> {
  const { pid: _pid, ...rest } = answer.body;
  return rest;
}

test('behind nginx with trustProxy 1: a spoofed Forwarded or X-Forwarded-For changes nothing; the 6th request is 429; junk falls back', {
  skip: SKIP_WITHOUT_NGINX,
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: { service: SERVICE, trustProxy: 1 } }).ready(2, 30_000);
  const upstream = `http://127.0.0.1:${cluster.appPort}`;
  const port = await nginx(t, {
    server: `
    # the usual setup: the address nginx saw appended to the client's list, scheme and host its own
    location / {
      proxy_pass ${upstream};
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
    # a proxy that relays the client's X-Forwarded-* untouched (nginx's default without proxy_set_header)
    location /relay/ {
      proxy_pass ${upstream}/;
    }`,
  });

  const answers: Answer[] = [];
  for (let n = 1; n <= 6; n++) {
    answers.push(
      await get(port, '/limited', '127.0.0.2', {
        forwarded: `for=9.8.7.${n};proto=https;host=evil.example`,
        'x-forwarded-for': `9.8.7.${n}`,
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
      }),
    );
  }
  for (const answer of answers.slice(0, 5)) {
    t.assert.equal(answer.status, 200);
    t.assert.deepStrictEqual(client(answer), { ip: '127.0.0.2', protocol: 'http', host: 'shop.example' }, 'the address nginx saw');
  }
  t.assert.equal(answers[5]?.status, 429, 'the 6th request of the same client, whatever it claimed');
  t.assert.equal(answers[5]?.body['code'], 'RATE_LIMITED');
  const other = await get(port, '/limited', '127.0.0.3');
  t.assert.equal(other.status, 200, 'another client behind the same nginx: its own count');
  t.assert.equal(other.body['ip'], '127.0.0.3');

  const junk = {
    'x-forwarded-for': 'not-an-ip<script>',
    'x-forwarded-proto': 'javascript',
    'x-forwarded-host': 'evil.example/<script>',
  };
  // through the usual setup, nginx appends the real address and replaces -Proto and -Host
  t.assert.deepStrictEqual(client(await get(port, '/whoami', '127.0.0.4', junk)), {
    ip: '127.0.0.4',
    protocol: 'http',
    host: 'shop.example',
  });
  // relayed untouched, the junk reaches the service: the peer (nginx), the socket's scheme, the Host nginx sent
  t.assert.deepStrictEqual(client(await get(port, '/relay/whoami', '127.0.0.4', junk)), {
    ip: '127.0.0.1',
    protocol: 'http',
    host: `127.0.0.1:${cluster.appPort}`,
  });
  t.assert.deepStrictEqual(
    client(await get(port, '/relay/whoami', '127.0.0.4', { 'x-forwarded-proto': 'HTTPS', 'x-forwarded-host': 'shop.example:8443' })),
    { ip: '127.0.0.1', protocol: 'https', host: 'shop.example:8443' },
    'valid values relayed are taken',
  );
  // the request lines reach the primary's stdout a little after the answers, each worker's on its own pipe
  const completed = (l: { msg?: unknown }) => l.msg === 'request completed';
  await cluster.waitFor((l) => completed(l) && l['path'] === '/whoami' && l['ip'] === '127.0.0.4', 'the junk request logged');
  await cluster.waitFor((l) => completed(l) && l['path'] === '/whoami' && l['ip'] === '127.0.0.1', 'a relayed request logged');
  const logged = cluster.lines.filter(completed);
  t.assert.ok(!logged.some((l) => JSON.stringify(l).includes('<script>')), 'no junk in the request log');
});

test('behind nginx with trustProxyHeader forwarded: the Forwarded element nginx appends is read, X-Forwarded-For ignored', {
  skip: SKIP_WITHOUT_NGINX,
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: { service: SERVICE, trustProxy: 1, trustProxyHeader: 'forwarded' } }).ready(2, 30_000);
  const port = await nginx(t, {
    http: `
  map $remote_addr $forwarded_node {
    ~: "\\"[$remote_addr]\\"";
    default $remote_addr;
  }
  map $http_forwarded $proxy_add_forwarded {
    "" "for=$forwarded_node;proto=$scheme;host=\\"$host\\"";
    default "$http_forwarded, for=$forwarded_node;proto=$scheme;host=\\"$host\\"";
  }`,
    server: `
    location / {
      proxy_pass http://127.0.0.1:${cluster.appPort};
      proxy_set_header Forwarded $proxy_add_forwarded;
    }`,
  });
  const spoofed = await get(port, '/whoami', '127.0.0.2', {
    forwarded: 'for=9.8.7.6;proto=https;host=evil.example',
    'x-forwarded-for': '9.8.7.6',
    'x-forwarded-proto': 'https',
  });
  t.assert.deepStrictEqual(client(spoofed), { ip: '127.0.0.2', protocol: 'http', host: 'shop.example' });
  const open = await get(port, '/whoami', '127.0.0.3', { forwarded: 'for="9.8.7.6;proto=https' });
  t.assert.deepStrictEqual(client(open), { ip: '127.0.0.3', protocol: 'http', host: 'shop.example' }, 'a quote left open spoils nothing');
  t.assert.deepStrictEqual(client(await get(port, '/whoami', '127.0.0.4')), { ip: '127.0.0.4', protocol: 'http', host: 'shop.example' });
});
