import type { Worker } from 'node:cluster';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../src/config/types.ts';
import { TlsRotation } from '../../src/primary/tls-rotation.ts';
import { tempFiles } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { sink } from '../helpers/sink.ts';
import { ThrowawayCa } from '../helpers/throwaway-ca.ts';

// The primary's side of a rotation, without its polling (never started here): what SIGHUP does
// (`reload`), what a forked worker gets, and what a reload of the config moves the watch to.

const skip = requireTool('openssl');

interface Sent {
  type: string;
  cert?: string;
}

/** A worker as the rotation sees one: what it is sent is kept. */
function fakeWorker(connected = true): Worker & { sent: Sent[] } {
  const sent: Sent[] = [];
  return { sent, isConnected: () => connected, send: (message: Sent) => sent.push(message) > 0 } as unknown as Worker & { sent: Sent[] };
}

/** A CA in a temp dir, a pair in place at tls.crt/tls.key, and a rotation over it with two workers. */
function setUp(t: TestContext) {
  const dir = tempFiles(t, {});
  const ca = new ThrowawayCa(dir);
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  const install = (issued: { cert: string; key: string }) => {
    copyFileSync(issued.cert, certFile);
    copyFileSync(issued.key, keyFile);
  };
  const first = ca.issue('first', 'localhost', 'serverAuth');
  install(first);
  const logs = sink();
  const workers = [fakeWorker(), fakeWorker(), fakeWorker(false)];
  const rotation = new TlsRotation({ certFile, keyFile }, pino({ level: 'info' }, logs), new Registry(), () => workers);
  t.after(() => rotation.close());
  return { dir, ca, certFile, keyFile, install, first, logs, workers, rotation };
}

test('SIGHUP (reload) hands a changed pair to every connected worker at once, and logs it', { skip }, (t: TestContext) => {
  const { ca, install, logs, workers, rotation } = setUp(t);
  const second = ca.issue('second', 'localhost', 'serverAuth');
  install(second);

  rotation.reload();

  for (const worker of workers.slice(0, 2)) {
    t.assert.deepStrictEqual(
      worker.sent.map((m) => [m.type, m.cert]),
      [['flotilla:certificates', readFileSync(second.cert, 'utf8')]],
    );
  }
  t.assert.deepStrictEqual(workers[2]?.sent, [], 'a worker whose channel is closed is skipped');
  t.assert.ok(logs.lines.some((l) => l['msg'] === 'TLS certificate reloaded: the workers use it for new handshakes' && l['workers'] === 3));

  rotation.reload();
  t.assert.strictEqual(workers[0]?.sent.length, 1, 'an unchanged pair is not sent again');
});

test('SIGHUP with a pair that does not match is refused: nothing sent, one error line naming the file', { skip }, (t: TestContext) => {
  const { ca, certFile, keyFile, first, logs, workers, rotation } = setUp(t);
  const other = ca.issue('other', 'localhost', 'serverAuth');
  copyFileSync(other.key, keyFile); // the key of another certificate

  rotation.reload();

  t.assert.deepStrictEqual(workers[0]?.sent, []);
  const refused = logs.lines.filter((l) => String(l['msg']).startsWith('TLS certificate reload refused'));
  t.assert.strictEqual(refused.length, 1);
  t.assert.strictEqual(refused[0]?.['key'], 'tls.keyFile');
  t.assert.strictEqual(refused[0]?.['file'], keyFile);
  t.assert.strictEqual(refused[0]?.['level'], 50);

  // a worker forked now starts with the pair still in use: the first one
  const forked = fakeWorker();
  rotation.forked(forked);
  t.assert.deepStrictEqual(forked.sent[0]?.cert, readFileSync(first.cert, 'utf8'));
  t.assert.ok(readFileSync(certFile, 'utf8') === forked.sent[0]?.cert);
});

test('a reloaded config naming other files moves the watch there and sends their pair; a bad one keeps the old', {
  skip,
}, (t: TestContext) => {
  const { ca, first, logs, workers, rotation } = setUp(t);
  const moved = ca.issue('moved', 'localhost', 'serverAuth');
  const config = (tls: ResolvedConfig['tls']) => ({ tls }) as ResolvedConfig;

  const sent = workers[0]!.sent;
  rotation.follow(config({ certFile: moved.cert, keyFile: first.key }));
  t.assert.strictEqual(sent.length, 0, 'a pair that does not match is refused');
  t.assert.ok(logs.lines.some((l) => l['level'] === 50 && String(l['msg']).includes('TLS files of the reloaded config refused')));

  const movedCert = readFileSync(moved.cert, 'utf8');
  rotation.follow(config({ certFile: moved.cert, keyFile: moved.key }));
  t.assert.deepStrictEqual(
    sent.map((m) => m.cert),
    [movedCert],
  );

  // SIGHUP from now on reads the moved files
  const again = ca.issue('again', 'localhost', 'serverAuth');
  copyFileSync(again.cert, moved.cert);
  copyFileSync(again.key, moved.key);
  rotation.reload();
  t.assert.deepStrictEqual(
    sent.map((m) => m.cert),
    [movedCert, readFileSync(again.cert, 'utf8')],
  );
});
