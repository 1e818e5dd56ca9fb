import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect as h2connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ClusterProcess } from '../../tools/cluster-process.ts';
import { byMsg, CLI, clusterYaml, get, sample, scrapeUntil, tempFiles } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { servedSerial, ThrowawayCa } from '../helpers/throwaway-ca.ts';

/** curl speaks h1, h2 and h2c to the cluster; openssl makes the throwaway CA and reads the certificate served. */
const skip = requireTool('curl') || requireTool('openssl');

/** Starts a 2-worker cluster of the fixture service with `config` over the base, its YAML in `dir`. */
async function cluster(t: TestContext, dir: string, config: Record<string, unknown>): Promise<ClusterProcess> {
  const file = join(dir, 'app.yaml');
  writeFileSync(file, clusterYaml({ shutdown: { drainDelayMs: 100 }, ...config }));
  const started = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => started.kill());
  return started.ready();
}

/** `curl` with `args`: its output (`-w` last), or its exit code when it fails. */
function curl(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '10', ...args], (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, out: stdout });
    });
  });
}

/** A CA in a fresh directory, and the server certificate it issued there. */
function withCa(t: TestContext) {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  const server = ca.issue('server', 'localhost', 'serverAuth');
  return { dir, ca, server };
}

test('TLS with http2: curl --http2 gets h2 by ALPN, HTTP/1.1 on the same port; the expiry gauge is exported once', {
  skip,
}, async (t: TestContext) => {
  const { dir, ca } = withCa(t);
  const c = await cluster(t, dir, { http2: true, tls: { certFile: 'server.pem', keyFile: 'server.key' } });
  const url = `https://localhost:${c.appPort}/who`;
  const h2 = await curl(['--http2', '--cacert', ca.cert, '--resolve', `localhost:${c.appPort}:127.0.0.1`, '-w', '\n%{http_version}', url]);
  t.assert.strictEqual(h2.code, 0);
  t.assert.match(h2.out, /^\{"pid":\d+\}\n2$/);
  const h1 = await curl([
    '--http1.1',
    '--cacert',
    ca.cert,
    '--resolve',
    `localhost:${c.appPort}:127.0.0.1`,
    '-w',
    '\n%{http_version}',
    url,
  ]);
  t.assert.match(h1.out, /^\{"pid":\d+\}\n1\.1$/);
  // plain HTTP on a TLS port is no request
  t.assert.notStrictEqual((await curl([`http://127.0.0.1:${c.appPort}/who`])).code, 0);

  // each worker pushes its counts when it is ready to: wait for both requests' (they may come from both workers)
  const text = await scrapeUntil(
    c.metricsPort,
    (body) =>
      (sample(body, 'flotilla_requests_by_protocol_total{protocol="h2",tls="true"}') ?? 0) >= 1 &&
      sample(body, 'flotilla_requests_by_protocol_total{protocol="h1",tls="true"}') === 1,
  );
  const expiry = text.split('\n').filter((line) => line.startsWith('flotilla_tls_certificate_expiry_seconds{'));
  t.assert.strictEqual(expiry.length, 1, 'one series: the primary exports it, not each worker');
  const seconds = Number(expiry[0]?.split(' ')[1]);
  t.assert.ok(seconds > 86_400 && seconds <= 2 * 86_400, `${seconds} s left on a two-day certificate`);
  t.assert.match(expiry[0] ?? '', /file=".*server\.pem"/);
});

test('h2c: curl --http2-prior-knowledge and HTTP/1.1 on the same plain port; /health on both', { skip }, async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const c = await cluster(t, dir, { http2: true });
  const base = `http://127.0.0.1:${c.appPort}`;
  const h2 = await curl(['--http2-prior-knowledge', '-w', '\n%{http_version}', `${base}/who`]);
  t.assert.match(h2.out, /^\{"pid":\d+\}\n2$/);
  const h1 = await curl(['--http1.1', '-w', '\n%{http_version}', `${base}/who`]);
  t.assert.match(h1.out, /^\{"pid":\d+\}\n1\.1$/);
  const health = await curl(['--http2-prior-knowledge', '-w', '\n%{http_code}', `${base}/health`]);
  t.assert.match(health.out, /\n200$/);
  t.assert.strictEqual((await get(c.appPort, '/health')).status, 200);
});

test('balancing: primary: the primary hands over the raw connection, each worker speaks TLS, h2 and h2c on it', {
  skip,
}, async (t: TestContext) => {
  const { dir, ca } = withCa(t);
  const tls = await cluster(t, dir, {
    http2: true,
    cluster: { balancing: 'primary' },
    tls: { certFile: 'server.pem', keyFile: 'server.key' },
  });
  const resolve = ['--cacert', ca.cert, '--resolve', `localhost:${tls.appPort}:127.0.0.1`, '-w', '\n%{http_version}'];
  const pids = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const version = i % 2 === 0 ? '--http2' : '--http1.1';
    const reply = await curl([version, ...resolve, `https://localhost:${tls.appPort}/who`]);
    t.assert.match(reply.out, i % 2 === 0 ? /^\{"pid":\d+\}\n2$/ : /^\{"pid":\d+\}\n1\.1$/, `${version}: ${reply.out}`);
    pids.add(reply.out.split('\n')[0] ?? '');
  }
  t.assert.strictEqual(pids.size, 2, 'the primary handed connections to both workers');

  const h2c = await cluster(t, tempFiles(t, {}), { http2: true, cluster: { balancing: 'primary' } });
  const base = `http://127.0.0.1:${h2c.appPort}/who`;
  t.assert.match((await curl(['--http2-prior-knowledge', '-w', '\n%{http_version}', base])).out, /\n2$/);
  t.assert.match((await curl(['--http1.1', '-w', '\n%{http_version}', base])).out, /\n1\.1$/);
});

test('mTLS: a client certificate the CA issued is served, a handshake without one is refused', { skip }, async (t: TestContext) => {
  const { dir, ca } = withCa(t);
  const client = ca.issue('client', 'client', 'clientAuth');
  const c = await cluster(t, dir, {
    http2: true,
    tls: { certFile: 'server.pem', keyFile: 'server.key', caFile: 'ca.pem', requestClientCert: true },
  });
  const common = ['--cacert', ca.cert, '--resolve', `localhost:${c.appPort}:127.0.0.1`, `https://localhost:${c.appPort}/who`];
  const served = await curl(['--http2', '--cert', client.cert, '--key', client.key, '-w', '\n%{http_version}', ...common]);
  t.assert.strictEqual(served.code, 0);
  t.assert.match(served.out, /\n2$/);
  const refused = await curl(['--http2', ...common]);
  t.assert.notStrictEqual(refused.code, 0, 'no certificate, no request');
  t.assert.strictEqual(refused.out, '');
});

test('a certificate rotated under load (a Kubernetes secret swap): no request fails, the new one is served; a bad pair is refused', {
  skip,
}, async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  // the layout of a Kubernetes secret volume: tls.crt → ..data/tls.crt, ..data → a directory swapped whole
  const version = (name: string) => {
    const issued = ca.issue(`server-${name}`, 'localhost', 'serverAuth');
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'tls.crt'), readFileSync(issued.cert));
    writeFileSync(join(dir, name, 'tls.key'), readFileSync(issued.key));
    return issued;
  };
  const swap = (name: string) => {
    symlinkSync(name, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  const first = version('v1');
  symlinkSync('v1', join(dir, '..data'));
  symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
  symlinkSync('..data/tls.key', join(dir, 'tls.key'));
  const c = await cluster(t, dir, { tls: { certFile: 'tls.crt', keyFile: 'tls.key' } });
  t.assert.strictEqual(await servedSerial(c.appPort), first.serial);

  const caPem = readFileSync(ca.cert);
  let running = true;
  let served = 0;
  const failures: string[] = [];
  // four clients, a new TLS connection (a full handshake) for every request
  const loop = async () => {
    while (running) {
      try {
        const status = await httpsGet(c.appPort, caPem);
        if (status === 200) served++;
        else failures.push(`status ${status}`);
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  const loops = [loop(), loop(), loop(), loop()];
  t.after(() => {
    running = false;
  });
  const second = version('v2');
  swap('v2');
  await c.waitFor(byMsg('TLS certificate reloaded: the workers use it for new handshakes'), 'the rotation');
  const servedBefore = served;
  while (served < servedBefore + 50) await new Promise((r) => setTimeout(r, 20));
  t.assert.strictEqual(await servedSerial(c.appPort), second.serial);

  // a key that is not the certificate's: refused, the pair in use stays
  const stray = ca.issue('stray', 'localhost', 'serverAuth');
  mkdirSync(join(dir, 'v3'));
  writeFileSync(join(dir, 'v3', 'tls.crt'), readFileSync(stray.cert));
  writeFileSync(join(dir, 'v3', 'tls.key'), readFileSync(second.key));
  swap('v3');
  const refused = await c.waitFor((line) => String(line.msg).startsWith('TLS certificate reload refused: '), 'the refusal');
  t.assert.strictEqual(refused['key'], 'tls.keyFile');
  t.assert.match(
    String(refused.msg),
    /tls\.key is not the private key of the certificate in .*tls\.crt; the workers keep the previous certificate$/,
  );
  running = false;
  await Promise.all(loops);
  t.assert.deepStrictEqual(failures, []);
  t.assert.ok(served > 50, `${served} requests served`);
  t.assert.strictEqual(await servedSerial(c.appPort), second.serial);
});

test('SIGTERM with h2 streams open: GOAWAY, every stream completes with 200, exit 0', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const c = await cluster(t, dir, { http2: true });
  const session = h2connect(`http://127.0.0.1:${c.appPort}`);
  t.after(() => session.destroy());
  const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
  const streams = Array.from(
    { length: 3 },
    () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({ ':path': '/gated?ms=1500' });
        let status = 0;
        let body = '';
        stream.on('response', (headers) => {
          status = Number(headers[':status']);
        });
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => {
          body += chunk;
        });
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
      }),
  );
  await c.waitForCount(byMsg('fixture gate waiting'), 3, 'three streams in their handlers');
  c.signal('SIGTERM');
  await goaway;
  const answers = await Promise.all(streams);
  for (const answer of answers) {
    t.assert.strictEqual(answer.status, 200);
    t.assert.match(answer.body, /^\{"pid":\d+\}$/);
  }
  t.assert.strictEqual((await c.exit(12_000)).code, 0);
});

function httpsGet(port: number, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port, path: '/pid', ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
