import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type CliRun, runCliInGroup } from '../helpers/cli.ts';
import { tempFiles } from '../helpers/cluster.ts';

/**
 * Config mistakes through the real CLI, as a user meets them: an unknown key names the key it
 * misspells, at the top level, nested, and under `settings` (against the service's schema); and a
 * mistake under `settings` stops `flotilla start` before the primary opens any port, on stderr,
 * exit 2, even when the metrics port is taken (which would otherwise be the error seen).
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** A service declaring its settings; `GET /settings` answers them. */
const SERVICE = `import { defineService } from '${INDEX}';

export default defineService({
  settings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      greeting: { type: 'string', default: 'hello' },
      database: { type: 'object', additionalProperties: false, properties: { host: { type: 'string' } } },
    },
  },
  setup(app) {
    app.registerController({ routes: () => [{ method: 'GET', path: '/settings', handler: () => app.settings }] });
  },
});
`;

/** Lines 1 to 3 of every config here. */
const HEAD = ['serviceName: config-errors-it', 'host: 127.0.0.1', 'service: ./service.ts'];

/** `flotilla start` in `dir` to its exit. */
function start(t: TestContext, dir: string): Promise<CliRun> {
  return runCliInGroup(t, ['start', '--config', 'app.yaml'], { cwd: dir, execArgv: ['--conditions=source'], timeoutMs: 60_000 });
}

/** A TCP listener on 127.0.0.1 that holds a port for the test. */
async function holdPort(t: TestContext): Promise<number> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.after(() => new Promise<void>((done) => server.close(() => done())));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return address.port;
}

/** The problem lines of a CLI's stderr (`  - app.yaml:4: …`), without the list's dash. */
function problemLines(run: CliRun): string[] {
  return run.stderr
    .split('\n')
    .filter((l) => l.startsWith('  - '))
    .map((l) => l.slice(4));
}

test('an unknown key names the closest known one, at the top level and nested: file:line, exit 2', async (t: TestContext) => {
  const yaml = [
    ...HEAD,
    'port: 0',
    'wokers: 1',
    'cluster:',
    '  balancng: kernel',
    'cors:',
    '  orgins: [https://a.example]',
    'colour: blue',
    '',
  ];
  const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': yaml.join('\n') });
  const run = await start(t, dir);

  t.assert.strictEqual(run.code, 2, `${run.stdout}\n${run.stderr}`);
  t.assert.deepStrictEqual(problemLines(run), [
    'app.yaml:5: wokers: unknown key; did you mean workers?',
    'app.yaml:7: cluster.balancng: unknown key; did you mean balancing?',
    'app.yaml:9: cors.orgins: unknown key; did you mean origins?',
    'app.yaml:10: colour: unknown key',
  ]);
  t.assert.strictEqual(run.stdout, '', 'nothing started');
});

for (const balancing of ['kernel', 'primary'] as const) {
  test(`balancing ${balancing}: a settings typo with the metrics port taken is the error printed, exit 2, no port opened`, async (t: TestContext) => {
    const metricsPort = await holdPort(t);
    const yaml = [
      ...HEAD,
      'port: 0',
      'workers: 2',
      'cluster:',
      `  balancing: ${balancing}`,
      'metrics:',
      '  host: 127.0.0.1',
      `  port: ${metricsPort}`,
      'settings:',
      '  greting: bonjour',
      '  database:',
      '    hots: db.internal',
      '',
    ];
    const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': yaml.join('\n') });
    const run = await start(t, dir);

    t.assert.strictEqual(run.code, 2, `${run.stdout}\n${run.stderr}`);
    t.assert.match(run.stderr, /^flotilla: invalid configuration:$/m);
    t.assert.deepStrictEqual(problemLines(run), [
      'app.yaml:12: settings.greting: unknown key; did you mean greeting?',
      'app.yaml:14: settings.database.hots: unknown key; did you mean host?',
    ]);
    t.assert.doesNotMatch(run.stderr, /in use|EADDRINUSE/, 'the taken metrics port is never tried');
    for (const opened of ['metrics endpoint listening', 'cluster listening', 'could not start its own parts']) {
      t.assert.ok(!run.stdout.includes(opened), `no '${opened}' in the log:\n${run.stdout}`);
    }
  });
}
