import { request } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { byMsg, ClusterProcess } from '../../tools/cluster-process.ts';
import { CLI, clusterYaml, tempFiles, untilEachAnswered } from '../helpers/cluster.ts';

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;
const PINO = pathToFileURL(createRequire(import.meta.url).resolve('pino')).href;

/**
 * A service with the team's own pino logger: a binding of its own, a redacted header, a mixin, writing
 * to stdout as pino does by default. `GET /who` logs the request's headers through `ctx.logger`; the
 * service thread (role primary) logs one line and keeps a shutdown hook.
 */
const SERVICE = `import pino from '${PINO}';
import { defineService } from '${INDEX}';

export default defineService({
  logger: () => pino({
    base: { team: 'books', pid: process.pid },
    redact: ['req.headers["x-api-key"]'],
    mixin: () => ({ made: 'by-the-team' }),
  }),
  setup(app) {
    if (app.role === 'primary') {
      app.logger.info('the service thread’s setup');
      app.onShutdown(() => {});
    }
    app.registerController({
      routes: () => [
        {
          method: 'GET',
          path: '/who',
          handler: (ctx) => {
            ctx.logger.info({ req: { headers: ctx.headers } }, 'who asked');
            return ctx.ok({ pid: process.pid });
          },
        },
      ],
    });
  },
});
`;

/** `GET /who` with an API key, on a connection of its own (so that each worker gets some): the pid that answered. */
function who(port: number): Promise<{ status: number; pid: number }> {
  return new Promise((resolve, reject) => {
    const headers = { 'x-api-key': 'k-secret-123' };
    const req = request({ host: '127.0.0.1', port, path: '/who', headers, agent: false, signal: AbortSignal.timeout(5_000) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, pid: res.statusCode === 200 ? (JSON.parse(body) as { pid: number }).pid : 0 }),
      );
      res.on('error', reject);
    });
    req.on('error', reject).end();
  });
}

test('defineService({ logger }): both workers and the service thread log through it; every stdout line is JSON', async (t: TestContext) => {
  const dir = tempFiles(t, {
    'app.yaml': clusterYaml({ service: './service.mjs', workers: 2, cluster: { balancing: 'kernel' } }),
    'service.mjs': SERVICE,
  });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml') });
  t.after(() => cluster.kill());
  const { appPort } = await cluster.ready();

  const answers = await untilEachAnswered(
    cluster.workers.values(),
    () => who(appPort),
    (answer) => answer.pid,
  );
  t.assert.ok(answers.every((answer) => answer.status === 200));
  const thread = await cluster.waitFor(byMsg('the service thread’s setup'), 'the service thread’s line');
  // the request lines follow the handlers' lines: wait for one per worker
  await cluster.waitFor((line) => line.msg === 'request completed' && line['worker'] === 0, 'worker 0’s request line');
  await cluster.waitFor((line) => line.msg === 'request completed' && line['worker'] === 1, 'worker 1’s request line');

  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, `clean exit${cluster.tail()}`);
  await cluster.outputEnded();

  t.assert.deepStrictEqual(
    cluster.lines.filter((line) => 'raw' in line),
    [],
    'every line on stdout parses as JSON',
  );
  const requestLines = cluster.lines.filter((line) => line.msg === 'request completed');
  const whoLines = cluster.lines.filter((line) => line.msg === 'who asked');
  t.assert.ok(requestLines.length >= 2 && whoLines.length === requestLines.length, cluster.tail());
  for (const line of [...requestLines, ...whoLines]) {
    t.assert.strictEqual(line['team'], 'books', 'the logger’s own binding');
    t.assert.strictEqual(line['made'], 'by-the-team', 'its mixin');
    t.assert.ok(line['worker'] === 0 || line['worker'] === 1, 'flotilla’s binding, as a child');
    t.assert.strictEqual(typeof line['requestId'], 'string');
  }
  for (const line of whoLines) {
    const headers = (line['req'] as { headers: Record<string, unknown> }).headers;
    t.assert.strictEqual(headers['x-api-key'], '[Redacted]', 'its redaction');
  }
  t.assert.deepStrictEqual(new Set(requestLines.map((line) => line['pid'])), new Set(cluster.workers.values()));
  t.assert.strictEqual(thread['team'], 'books');
  t.assert.strictEqual(thread['role'], 'primary');
  t.assert.strictEqual(thread['thread'], 'service');
  // the workers' own lines go through it too; the primary's main thread keeps flotilla's logger
  const shutting = cluster.lines.filter((line) => line.msg === 'worker shutting down');
  t.assert.strictEqual(shutting.length, 2);
  for (const line of shutting) t.assert.strictEqual(line['team'], 'books');
  const listening = cluster.lines.find(byMsg('worker listening'));
  t.assert.strictEqual(listening?.['team'], undefined);
  t.assert.strictEqual(listening?.['service'], 'fixture');
});
