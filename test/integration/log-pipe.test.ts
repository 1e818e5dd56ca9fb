import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { Pool } from 'undici';
import { ClusterProcess, type Launch } from '../../tools/cluster-process.ts';
import { CLI, clusterYaml, tempFiles } from '../helpers/cluster.ts';

/** Request log lines to produce: about 50 MB of output through the pipe. */
const REQUESTS = 200_000;

/**
 * A cluster whose stdout is a FIFO shared by the primary and both workers, as
 * in a container, read a page at a time (see `openFifo`); it counts the
 * request lines and the lines that are not JSON instead of keeping them
 * (under load they are nearly all the output). With the destination pino
 * gave before (asynchronous batches written once 4 KiB were pending, so most
 * writes were longer than PIPE_BUF), this test saw dozens to hundreds of
 * spliced lines per run.
 */
class CountingCluster extends ClusterProcess {
  requestLines = 0;
  readonly malformed: string[] = [];

  constructor(launch: Launch) {
    super({ ...launch, stdoutFifo: true });
  }

  protected override onLine(text: string): void {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      this.malformed.push(text);
      return;
    }
    if ((line as { msg?: unknown }).msg === 'request completed') this.requestLines++;
    else super.onLine(text);
  }
}

/**
 * `requests` GETs of `/who` over `connections` keep-alive connections, each
 * with up to `pipelining` requests in flight; resolves with how many were
 * answered 200.
 */
async function drive(port: number, requests: number, connections = 32, pipelining = 8): Promise<number> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining });
  let sent = 0;
  let served = 0;
  const loop = async () => {
    while (sent < requests) {
      sent++;
      const { statusCode, body } = await pool.request({ method: 'GET', path: '/who' });
      await body.dump();
      if (statusCode === 200) served++;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections * pipelining }, loop));
  } finally {
    await pool.close();
  }
  return served;
}

test('two workers sharing a stdout pipe under load write only whole JSON lines, and every request line arrives', async (t: TestContext) => {
  // a closed loop of 256 requests in flight on a shared 2-core machine stands a queue near the admission
  // target: this test counts log lines, not what overload protection turns away (test/app/admission.test.ts)
  const dir = tempFiles(t, { 'app.yaml': clusterYaml({ overload: { enabled: false } }) });
  const cluster = new CountingCluster({ cli: CLI, configFile: join(dir, 'app.yaml') });
  t.after(() => cluster.kill());
  const { appPort } = await cluster.ready();

  const served = await drive(appPort, REQUESTS);
  t.assert.strictEqual(served, REQUESTS, 'every request was answered');

  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, `the cluster exited cleanly${cluster.tail()}`);
  await cluster.outputEnded();

  t.assert.deepStrictEqual(cluster.malformed.slice(0, 3), [], `${cluster.malformed.length} lines are not JSON`);
  t.assert.strictEqual(cluster.requestLines, served, 'one request line per request served, none lost at exit');
});
