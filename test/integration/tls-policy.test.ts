import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ClusterProcess } from '../../tools/cluster-process.ts';
import { runCli } from '../helpers/cli.ts';
import { byMsg, CLI, clusterYaml, tempFiles } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { servedSerial, ThrowawayCa } from '../helpers/throwaway-ca.ts';

// What a TLS client may negotiate with a cluster, asked by openssl s_client (and testssl.sh): by
// default TLS 1.2 and 1.3, and on TLS 1.2 only forward-secret AEAD suites (ECDHE with AES-GCM or
// ChaCha20-Poly1305); `tls.minVersion` and `tls.ciphers` change that, in every worker, and a
// certificate reload keeps it. The certificates are RSA ones: static-RSA suites need an RSA key, so
// an ECDSA certificate would refuse them whatever the suites.

const skip = requireTool('openssl');

/** The static-RSA (no forward secrecy), CBC (LUCKY13) and ARIA suites of TLS 1.2 that Node's defaults offered. */
const REFUSED_TLS12 = [
  'AES128-SHA',
  'AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-RSA-AES256-SHA384',
  'ECDHE-ARIA128-GCM-SHA256',
  'ARIA256-GCM-SHA384',
  'AES256-CCM',
];

/** Starts a 2-worker cluster of the fixture service with `config` over the base, its YAML in `dir`. */
async function cluster(t: TestContext, dir: string, config: Record<string, unknown>): Promise<ClusterProcess> {
  const file = join(dir, 'app.yaml');
  writeFileSync(file, clusterYaml({ shutdown: { drainDelayMs: 100 }, ...config }));
  const started = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => started.kill());
  return started.ready();
}

/** A CA in a fresh directory and an RSA server certificate it issued, in `tls.crt` and `tls.key`. */
function withRsaCertificate(t: TestContext) {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  const issued = ca.issue('server', 'localhost', 'serverAuth', 'rsa');
  writeFileSync(join(dir, 'tls.crt'), readFileSync(issued.cert));
  writeFileSync(join(dir, 'tls.key'), readFileSync(issued.key));
  return { dir, ca, issued, tls: { certFile: 'tls.crt', keyFile: 'tls.key' } };
}

/** What `openssl s_client` with `args` negotiated with the server at `port`, or `null` when the handshake failed. */
function handshake(port: number, args: readonly string[]): Promise<{ protocol: string; cipher: string } | null> {
  return new Promise((resolve) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-brief', ...args],
      { timeout: 10_000 },
      (error, stdout, stderr) => {
        if (error !== null) return resolve(null);
        const text = `${stdout}\n${stderr}`;
        const protocol = /^Protocol version: (\S+)$/m.exec(text)?.[1];
        const cipher = /^Ciphersuite: (\S+)$/m.exec(text)?.[1];
        resolve(protocol === undefined || cipher === undefined ? null : { protocol, cipher });
      },
    );
    child.stdin?.end();
  });
}

/** A TLS 1.2 handshake offering `cipher` only: the suite negotiated, or `null`. */
async function tls12(port: number, cipher: string): Promise<string | null> {
  return (await handshake(port, ['-tls1_2', '-cipher', cipher]))?.cipher ?? null;
}

/** Every suite of REFUSED_TLS12 refused, a few times each (the connections spread over both workers). */
async function assertWeakRefused(t: TestContext, port: number, rounds = 2): Promise<void> {
  for (let round = 0; round < rounds; round++)
    for (const cipher of REFUSED_TLS12) t.assert.strictEqual(await tls12(port, cipher), null, `${cipher} refused`);
}

test('defaults: TLS 1.2 with ECDHE AES-GCM or ChaCha20 only, TLS 1.3 as Node has it; no static RSA, CBC, ARIA, TLS 1.1', {
  skip,
}, async (t: TestContext) => {
  const { dir, tls } = withRsaCertificate(t);
  const c = await cluster(t, dir, { tls });
  const port = c.appPort;
  await assertWeakRefused(t, port);
  // TLS 1.1 and 1.0: refused even to a client that allows every suite
  t.assert.strictEqual(await handshake(port, ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0']), null, 'TLS 1.1 refused');
  t.assert.strictEqual(await handshake(port, ['-tls1', '-cipher', 'DEFAULT:@SECLEVEL=0']), null, 'TLS 1.0 refused');
  for (const cipher of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'])
    t.assert.strictEqual(await tls12(port, cipher), cipher, `${cipher} accepted`);
  // a client offering everything gets the server's first choice
  t.assert.deepStrictEqual(await handshake(port, ['-tls1_2', '-cipher', 'ALL']), {
    protocol: 'TLSv1.2',
    cipher: 'ECDHE-RSA-AES128-GCM-SHA256',
  });
  for (const suite of ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'])
    t.assert.deepStrictEqual(await handshake(port, ['-tls1_3', '-ciphersuites', suite]), { protocol: 'TLSv1.3', cipher: suite });
});

test('a certificate reload keeps the suites restricted: the new certificate is served, static RSA and CBC still refused', {
  skip,
}, async (t: TestContext) => {
  const { dir, ca, issued, tls } = withRsaCertificate(t);
  const c = await cluster(t, dir, { tls, http2: true });
  t.assert.strictEqual(await servedSerial(c.appPort), issued.serial);
  const next = ca.issue('next', 'localhost', 'serverAuth', 'rsa');
  writeFileSync(join(dir, 'tls.crt'), readFileSync(next.cert));
  writeFileSync(join(dir, 'tls.key'), readFileSync(next.key));
  await c.waitFor(byMsg('TLS certificate reloaded: the workers use it for new handshakes'), 'the rotation');
  // the workers load it as the primary's message reaches them: wait until the new one is served
  while ((await servedSerial(c.appPort)) !== next.serial) await new Promise((resolve) => setTimeout(resolve, 50));
  await assertWeakRefused(t, c.appPort);
  t.assert.strictEqual(await handshake(c.appPort, ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0']), null, 'TLS 1.1 refused');
  t.assert.strictEqual(await tls12(c.appPort, 'ECDHE-RSA-AES256-GCM-SHA384'), 'ECDHE-RSA-AES256-GCM-SHA384');
});

test('tls.minVersion: TLSv1.3 refuses TLS 1.2 on the h2 secure server, with balancing: primary too', { skip }, async (t: TestContext) => {
  const { dir, tls } = withRsaCertificate(t);
  const c = await cluster(t, dir, { tls: { ...tls, minVersion: 'TLSv1.3' }, http2: true, cluster: { balancing: 'primary' } });
  for (let i = 0; i < 3; i++) {
    t.assert.strictEqual(await handshake(c.appPort, ['-tls1_2']), null, 'TLS 1.2 refused');
    const accepted = await handshake(c.appPort, ['-tls1_3', '-alpn', 'h2']);
    t.assert.strictEqual(accepted?.protocol, 'TLSv1.3');
  }
});

test('tls.ciphers: the suites listed, in their order, whatever the client prefers; TLS 1.3 unaffected', {
  skip,
}, async (t: TestContext) => {
  const { dir, tls } = withRsaCertificate(t);
  const ciphers = 'ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384';
  const c = await cluster(t, dir, { tls: { ...tls, ciphers }, http2: true });
  const port = c.appPort;
  t.assert.strictEqual(await tls12(port, 'ECDHE-RSA-AES128-GCM-SHA256'), null, 'a default suite left out is refused');
  t.assert.strictEqual(await tls12(port, 'ECDHE-RSA-AES256-GCM-SHA384'), 'ECDHE-RSA-AES256-GCM-SHA384');
  // the client lists AES first; the server's order wins
  const chosen = await tls12(port, 'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305');
  t.assert.strictEqual(chosen, 'ECDHE-RSA-CHACHA20-POLY1305');
  t.assert.strictEqual((await handshake(port, ['-tls1_3']))?.protocol, 'TLSv1.3');
});

test('a tls.ciphers OpenSSL cannot serve stops the start: exit 2 naming the file, the line and the key', async (t: TestContext) => {
  const { dir, tls } = withRsaCertificate(t);
  const file = join(dir, 'app.yaml');
  const yaml = clusterYaml({ tls: { ...tls, ciphers: 'NO-SUCH-SUITE:!ALL' } });
  writeFileSync(file, yaml);
  const line = yaml.split('\n').findIndex((text) => text.includes('ciphers:')) + 1;
  const run = await runCli(['start', '--config', file]);
  t.assert.strictEqual(run.code, 2, run.stderr);
  t.assert.ok(
    run.stderr.includes(`${file}:${line}: tls.ciphers: 'NO-SUCH-SUITE:!ALL' leaves no TLS 1.2 cipher suite OpenSSL knows`),
    run.stderr,
  );

  const named = clusterYaml({ tls: { ...tls, ciphers: 'TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256' } });
  writeFileSync(file, named);
  const refused = await runCli(['start', '--config', file]);
  t.assert.strictEqual(refused.code, 2, refused.stderr);
  t.assert.match(refused.stderr, /tls\.ciphers: names TLS 1\.3 suites \(TLS_AES_128_GCM_SHA256\)/);
});

test('testssl.sh against a 2-worker cluster: no static-RSA, CBC or ARIA suite offered', {
  skip: requireTool('testssl') || skip,
}, async (t: TestContext) => {
  const { dir, tls } = withRsaCertificate(t);
  const c = await cluster(t, dir, { tls });
  // --each-cipher alone: every suite tried one by one (about 20 s; --protocols would add 30 s for what
  // the s_client checks above show already)
  const report = await new Promise<string>((resolve, reject) => {
    const args = ['--quiet', '--color', '0', '--warnings', 'off', '--openssl', '/usr/bin/openssl', '--each-cipher'];
    execFile('testssl', [...args, `127.0.0.1:${c.appPort}`], { timeout: 120_000, maxBuffer: 4 << 20 }, (error, stdout) => {
      if (error !== null && stdout === '') reject(error);
      else resolve(stdout);
    });
  });
  // the suites table: " xc02f   ECDHE-RSA-AES128-GCM-SHA256   ECDH 253   AESGCM   128   TLS_ECDHE_RSA_WITH_…"
  const offered = [...report.matchAll(/^ x[0-9a-f]+ +(\S+) +(?:ECDH \d+|DH \d+|\S+) +(\S+)/gm)].map(([, name, encryption]) => ({
    name,
    encryption,
  }));
  t.assert.deepStrictEqual(
    offered.map((suite) => suite.name).sort(),
    [
      'ECDHE-RSA-AES128-GCM-SHA256',
      'ECDHE-RSA-AES256-GCM-SHA384',
      'ECDHE-RSA-CHACHA20-POLY1305',
      'TLS_AES_128_GCM_SHA256',
      'TLS_AES_256_GCM_SHA384',
      'TLS_CHACHA20_POLY1305_SHA256',
    ],
    report,
  );
  for (const suite of offered) t.assert.match(suite.encryption ?? '', /^(AESGCM|ChaCha20)$/, `${suite.name}: an AEAD cipher`);
});
