import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { App } from '../../../src/app/app.ts';
import { tempFiles } from '../../helpers/cluster.ts';
import { requireTool } from '../../helpers/require-tool.ts';
import { sink } from '../../helpers/sink.ts';
import { ThrowawayCa } from '../../helpers/throwaway-ca.ts';

const skip = requireTool('openssl');

/** A TLS connection to the App; resolves once the handshake is done. */
function handshake(t: TestContext, port: number, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => resolve(socket));
    socket.on('error', reject);
    t.after(() => socket.destroy());
  });
}

/** One HTTP/1.1 request on an open TLS connection: the status line. */
function statusOn(socket: TLSSocket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').split('\r\n')[0] ?? ''));
    socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  });
}

const serialOf = (socket: TLSSocket) => socket.getPeerCertificate().serialNumber.replace(/^0+/, '').toUpperCase();

test('a standalone App reloads a changed pair for new handshakes, keeps open connections, and refuses a bad pair', {
  skip,
}, async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  const trust = readFileSync(ca.cert, 'utf8');
  const first = ca.issue('first', 'localhost', 'serverAuth');
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, readFileSync(first.cert));
  writeFileSync(keyFile, readFileSync(first.key));
  const logs = sink();
  const app = new App(
    { port: 0, host: '127.0.0.1', tls: { certFile, keyFile }, logging: { level: 'info', requests: false } },
    { logStream: logs, handleSignals: false, serveMetrics: false },
  );
  const listening = app.listen();
  t.after(() => app.close().then(() => listening));
  const { port } = await app.ready();
  const open = await handshake(t, port, trust);
  assert.equal(serialOf(open), first.serial);

  // a key that belongs to another certificate: refused, the file named, the first pair stays
  const stray = ca.issue('stray', 'localhost', 'serverAuth');
  writeFileSync(keyFile, readFileSync(stray.key));
  const refused = await logs.waitFor((line) => String(line['msg']).startsWith('TLS certificate reload refused'));
  assert.equal(refused['level'], 'error');
  assert.equal(refused['file'], keyFile);
  assert.equal(refused['key'], 'tls.keyFile');
  assert.equal(serialOf(await handshake(t, port, trust)), first.serial);

  // a good pair: new handshakes get it, the connection opened before goes on with its own
  const second = ca.issue('second', 'localhost', 'serverAuth');
  writeFileSync(certFile, readFileSync(second.cert));
  writeFileSync(keyFile, readFileSync(second.key));
  await logs.waitFor((line) => line['msg'] === 'TLS certificate reloaded: new handshakes use it');
  assert.equal(serialOf(await handshake(t, port, trust)), second.serial);
  assert.equal(await statusOn(open), 'HTTP/1.1 200 OK');
  assert.equal(serialOf(open), first.serial);

  const text = await app.registry.metrics();
  assert.match(text, new RegExp(`flotilla_tls_certificate_expiry_seconds\\{file="${certFile.replaceAll('/', '\\/')}"\\} \\d+`));
});

test('a standalone App keeps tls.ciphers across a certificate reload; a list OpenSSL cannot serve fails its listen', {
  skip,
}, async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  const trust = readFileSync(ca.cert, 'utf8');
  const first = ca.issue('first', 'localhost', 'serverAuth');
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, readFileSync(first.cert));
  writeFileSync(keyFile, readFileSync(first.key));
  const logs = sink();
  const tls = { certFile, keyFile, ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' };
  const app = new App(
    { port: 0, host: '127.0.0.1', tls, logging: { level: 'info', requests: false } },
    { logStream: logs, handleSignals: false, serveMetrics: false },
  );
  const listening = app.listen();
  t.after(() => app.close().then(() => listening));
  const { port } = await app.ready();
  /** The suite a TLS 1.2 client offering `ciphers` gets, or the handshake's error. */
  const tls12 = (ciphers: string) =>
    new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: trust, ciphers, maxVersion: 'TLSv1.2' }, () => {
        resolve(socket.getCipher().standardName);
        socket.destroy();
      });
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
  const check = async () => {
    assert.equal(
      await tls12('ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305'),
      'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    );
    assert.match(await tls12('ECDHE-ECDSA-AES128-GCM-SHA256'), /ALERT_HANDSHAKE_FAILURE$/, 'a suite left out is refused');
  };
  await check();

  const second = ca.issue('second', 'localhost', 'serverAuth');
  writeFileSync(certFile, readFileSync(second.cert));
  writeFileSync(keyFile, readFileSync(second.key));
  await logs.waitFor((line) => line['msg'] === 'TLS certificate reloaded: new handshakes use it');
  assert.equal(serialOf(await handshake(t, port, trust)), second.serial);
  await check();

  const refused = new App(
    { port: 0, host: '127.0.0.1', tls: { certFile, keyFile, ciphers: 'NO-SUCH-SUITE' }, logging: { level: 'silent' } },
    { handleSignals: false, serveMetrics: false },
  );
  await assert.rejects(refused.listen(), (error: Error) => {
    assert.equal(error.name, 'ConfigError');
    assert.match(error.message, /tls\.ciphers: 'NO-SUCH-SUITE' leaves no TLS 1\.2 cipher suite OpenSSL knows \(no cipher match\)/);
    return true;
  });
});
