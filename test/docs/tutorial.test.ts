import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments, stringify } from 'yaml';
import { kubePlayConf, podmanRunOptions } from '../helpers/podman.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { ENV, logLines, NPM_FLAGS, packageSources, run, type Started, startService } from '../helpers/user-project.ts';

/**
 * docs/tutorial/, followed as a newcomer follows it: one project, made from nothing with the packed
 * package, through the eight steps in order. Each step's files are taken from its page (a
 * "**File: `path`**" line, then the file whole, in a fenced block) and written over the project's;
 * then the commands the page gives run, and what it says they show is checked: `npm test`, `tsc`,
 * `npm start` as a 2-worker cluster on real sockets, the image built and run with podman, and the
 * manifests played by `podman kube play`.
 */

const root = resolve(import.meta.dirname, '../..');
const TUTORIAL = join(root, 'docs/tutorial');
const PKG = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
const TOKEN = 'change-me-to-a-long-random-string';
const skipPodman = requireTool('podman');

const work = mkdtempSync(join(tmpdir(), 'flotilla-tutorial-'));
after(() => rmSync(work, { recursive: true, force: true }));
const project = join(work, 'tasks');
const { tarball } = packageSources(work);

/** The page of step `n`, its text with lines joined (prose wraps anywhere). */
function page(n: number): { file: string; text: string; prose: string } {
  const file = readdirSync(TUTORIAL).find((name) => name.startsWith(`${String(n).padStart(2, '0')}-`));
  if (file === undefined) throw new Error(`no page for step ${n} in docs/tutorial/`);
  const text = readFileSync(join(TUTORIAL, file), 'utf8');
  return { file, text, prose: text.replace(/\s+/g, ' ') };
}

/** Writes the files step `n` gives, whole; resolves their paths. */
function writeStep(n: number): string[] {
  const { text } = page(n);
  const written: string[] = [];
  for (const match of text.matchAll(/^\*\*File: `([^`]+)`\*\*\n\n```\w*\n([\s\S]*?)^```$/gm)) {
    const [, path, content] = match as unknown as [string, string, string];
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), content);
    written.push(path);
  }
  return written;
}

/** Runs a command in the project. */
const inProject = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) => run(project, command, args, { env });

/** `npm test` in the project: its summary's pass and fail counts. */
async function npmTest(): Promise<{ pass: number; fail: number; output: string }> {
  const { stdout } = await inProject('npm', ['test']);
  const count = (name: string) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(stdout)?.[1]);
  return { pass: count('pass'), fail: count('fail'), output: stdout };
}

/**
 * The service as `npm start` runs it (2 workers, ports the OS picks, production), with the token and
 * `env`; resolves its port.
 */
async function start(t: TestContext, env: NodeJS.ProcessEnv = {}): Promise<{ started: Started; port: number; base: string }> {
  const started = startService(t, project, { TASKS_API_TOKEN: TOKEN, ...env });
  const port = await started.port;
  return { started, port, base: `http://127.0.0.1:${port}` };
}

/** SIGTERM to `npm start`, as a process manager sends it: exit 0 and a clean shutdown. */
async function stop(t: TestContext, started: Started): Promise<void> {
  started.child.kill('SIGTERM');
  const [code, signal] = await started.exit;
  t.assert.deepStrictEqual({ code, signal }, { code: 0, signal: null }, started.output());
  const done = logLines(started.stdout()).find((line) => line['msg'] === 'primary shutdown: done');
  t.assert.strictEqual(done?.['ok'], true, `a clean shutdown${started.output()}`);
}

async function request(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

const post = (base: string, body: unknown, token?: string) =>
  request(`${base}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });

/** A port free on 127.0.0.1 now (for podman, which cannot be asked for port 0 in a manifest). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `url` until it answers 200 or `deadlineMs` passes; `alive` fails the wait early (the container stopped). */
async function until200(url: string, alive: () => Promise<void>, deadlineMs = 90_000): Promise<number> {
  let status = 0;
  for (const deadline = Date.now() + deadlineMs; Date.now() < deadline && status !== 200; await sleep(500)) {
    status = await request(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status !== 200) await alive();
  }
  return status;
}

const podman = (args: string[], env: NodeJS.ProcessEnv = {}) => run(project, 'podman', args, { env }).then((r) => r.stdout.trim());

interface Task {
  id: number;
  title: string;
  done: boolean;
  createdAt: string;
}

describe('the tutorial, step by step, in a fresh project', { timeout: 1_800_000 }, () => {
  test('the index links the eight steps in order, each page linking the next', () => {
    const index = readFileSync(join(TUTORIAL, 'README.md'), 'utf8');
    const linked = [...index.matchAll(/\]\((\d\d-[a-z0-9-]+\.md)\)/g)].map((m) => m[1]);
    const pages = readdirSync(TUTORIAL).filter((name) => /^\d\d-/.test(name));
    if (linked.length !== 8 || pages.length !== 8) throw new Error(`8 steps: ${linked.join(', ')} / ${pages.join(', ')}`);
    for (const [i, name] of pages.sort().entries()) {
      if (linked[i] !== name) throw new Error(`step ${i + 1} of the index is ${linked[i]}, the page is ${name}`);
      const next = pages[i + 1];
      if (next !== undefined && !readFileSync(join(TUTORIAL, name), 'utf8').includes(`](${next})`))
        throw new Error(`${name} links ${next}`);
    }
  });

  test('1. init: the packed package in vendor/, flotilla init, npm test, tsc, npm start', async (t: TestContext) => {
    const { prose } = page(1);
    const packed = basename(await tarball());
    t.assert.ok(prose.includes(`npm install ./vendor/${packed}`), `step 1 installs ${packed}`);

    mkdirSync(project);
    await inProject('npm', ['init', '-y']);
    mkdirSync(join(project, 'vendor'));
    copyFileSync(await tarball(), join(project, 'vendor', packed));
    await inProject('npm', ['install', ...NPM_FLAGS, `./vendor/${packed}`]);
    // the versions flotilla itself is tested with, so that this runs from npm's cache
    const { typescript, '@types/node': types, 'pino-pretty': pretty } = PKG.devDependencies;
    t.assert.match(String(types), /^\^24\./, 'step 1 says @types/node@24');
    await inProject('npm', [
      'install',
      ...NPM_FLAGS,
      '--save-dev',
      `typescript@${typescript}`,
      `@types/node@${types}`,
      `pino-pretty@${pretty}`,
    ]);
    const init = await inProject('npx', ['--no', '--', 'flotilla', 'init']);
    t.assert.match(init.stdout, /wrote app\.yaml, src\/service\.ts, test\/service\.test\.ts, tsconfig\.json/);

    const tested = await npmTest();
    t.assert.deepStrictEqual({ pass: tested.pass, fail: tested.fail }, { pass: 4, fail: 0 }, tested.output);
    await inProject('npx', ['--no', '--', 'tsc']);

    const { started, base } = await start(t);
    t.assert.strictEqual((await request(`${base}/items?page=2&limit=5`)).status, 200);
    t.assert.strictEqual((await request(`${base}/health`)).status, 200);
    await stop(t, started);
  });

  test('2. a POST route with a schema: 201 and Location, the 400 problem the page shows', async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(2), ['src/tasks.ts', 'src/service.ts']);
    rmSync(join(project, 'test/service.test.ts'));
    await inProject('npx', ['--no', '--', 'tsc']);

    const { started, base } = await start(t);
    const created = await post(base, { title: 'Water the plants' });
    t.assert.strictEqual(created.status, 201, created.body);
    t.assert.strictEqual(created.headers.get('location'), '/tasks/1');
    const task = JSON.parse(created.body) as Task;
    t.assert.deepStrictEqual(
      { ...task, createdAt: typeof task.createdAt },
      { id: 1, title: 'Water the plants', done: false, createdAt: 'string' },
    );
    // one worker holds the list in memory: a request may reach the other, with a list of its own (step 5 says so)
    t.assert.ok([200, 404].includes((await request(`${base}/tasks/1`)).status));

    const { text } = page(2);
    const shown = JSON.parse(/```json\n([\s\S]*?)```/.exec(text)![1]!) as Record<string, unknown>;
    const refused = await post(base, { title: '', colour: 'red' });
    t.assert.strictEqual(refused.status, 400);
    const problem = JSON.parse(refused.body) as Record<string, unknown>;
    t.assert.deepStrictEqual(
      { ...problem, requestId: shown['requestId'] },
      shown,
      'the problem as the page prints it (its request id aside)',
    );
    t.assert.strictEqual((await post(base, { title: 'x', done: 'yes' })).status, 400, 'a JSON body is not coerced');
    await stop(t, started);
  });

  test('3. a token on writes: exit 2 without it, naming file and line; 401 without it, 201 with it', async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(3), ['src/auth.ts', 'src/service.ts', 'app.yaml']);
    await inProject('npx', ['--no', '--', 'tsc']);

    const { prose } = page(3);
    const quoted = /`(app\.yaml:\d+: settings\.apiToken: [^`]+)`/.exec(prose)?.[1];
    t.assert.ok(quoted, 'the page quotes the error');
    const { TASKS_API_TOKEN: _, ...unset } = ENV;
    const refused = spawnSync('npx', ['--no', '--', 'flotilla', 'dev', '--config', 'app.yaml'], {
      cwd: project,
      env: unset,
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.assert.strictEqual(refused.status, 2, refused.stderr);
    t.assert.ok(refused.stderr.includes(quoted), `the error the page quotes:\n${refused.stderr}`);

    const config = await inProject('npx', ['--no', '--', 'flotilla', 'config', '--config', 'app.yaml'], { TASKS_API_TOKEN: TOKEN });
    t.assert.ok(!config.stdout.includes(TOKEN) && config.stdout.includes('[redacted]'), 'flotilla config prints [redacted]');

    // the page reads /docs under `npm run dev`: development, as NODE_ENV says here
    const { started, base } = await start(t, { NODE_ENV: 'development' });
    const anonymous = await post(base, { title: 'Water the plants' });
    t.assert.strictEqual(anonymous.status, 401);
    t.assert.strictEqual(anonymous.headers.get('www-authenticate'), 'Bearer');
    t.assert.strictEqual((await post(base, { title: 'Water the plants' }, TOKEN)).status, 201);
    const document = JSON.parse((await request(`${base}/docs/openapi.json`)).body) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    t.assert.deepStrictEqual(document.paths['/tasks']?.['post']?.security, [{ bearerAuth: [] }]);
    t.assert.ok(document.components.securitySchemes['bearerAuth']);
    await stop(t, started);
  });

  test('4. tests through inject: npm test passes the four tests of the page', async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(4), ['test/tasks.test.ts']);
    await inProject('npx', ['--no', '--', 'tsc']);
    const tested = await npmTest();
    t.assert.deepStrictEqual({ pass: tested.pass, fail: tested.fail }, { pass: 4, fail: 0 }, tested.output);
    for (const line of page(4).text.matchAll(/^✔ (.+)$/gm)) t.assert.ok(tested.output.includes(`✔ ${line[1]}`), line[1]);
  });

  test('5. a database: migrations once, every worker on one file, the tasks outlive a restart', async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(5), [
      'migrations/0001-tasks.sql',
      'src/sqlite-task-store.ts',
      'src/service.ts',
      'app.yaml',
      'test/service-app.ts',
      'test/tasks.test.ts',
    ]);
    await inProject('sh', ['-c', "echo 'data/' >> .gitignore"]);
    await inProject('npx', ['--no', '--', 'tsc']);
    const tested = await npmTest();
    t.assert.deepStrictEqual({ pass: tested.pass, fail: tested.fail }, { pass: 5, fail: 0 }, tested.output);

    const first = await start(t);
    for (const title of ['one', 'two', 'three', 'four']) t.assert.strictEqual((await post(first.base, { title }, TOKEN)).status, 201);
    // new connections, spread over both workers: each one reads the same file
    for (let i = 1; i <= 4; i++)
      t.assert.strictEqual((await request(`${first.base}/tasks/${i}`, { headers: { connection: 'close' } })).status, 200);
    await stop(t, first.started);
    // read once the cluster has stopped: the service thread's lines may come after the workers'
    const applied = (s: Started) => logLines(s.stdout()).filter((line) => line['msg'] === 'migration 0001-tasks.sql applied');
    t.assert.strictEqual(applied(first.started).length, 1, `the page's log line, once${first.started.output()}`);

    const second = await start(t);
    const list = JSON.parse((await request(`${second.base}/tasks?limit=10`)).body) as { total: number };
    t.assert.strictEqual(list.total, 4, 'the tasks outlive the cluster');
    await stop(t, second.started);
    t.assert.strictEqual(applied(second.started).length, 0, 'no migration the second time');
  });

  test('6. a live feed: a socket on one worker hears of a task created through any', async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(6), ['src/service.ts', 'test/live-feed.test.ts']);
    await inProject('npx', ['--no', '--', 'tsc']);
    const tested = await npmTest();
    t.assert.deepStrictEqual({ pass: tested.pass, fail: tested.fail }, { pass: 7, fail: 0 }, tested.output);

    const { started, port, base } = await start(t);
    const socket = new WebSocket(`ws://127.0.0.1:${port}/tasks/live`);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error('the socket did not open'));
    });
    const heard: Task[] = [];
    socket.onmessage = (event) => heard.push(JSON.parse(String(event.data)) as Task);
    const created: Task[] = [];
    for (const title of ['a', 'b', 'c', 'd']) {
      const res = await request(`${base}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, connection: 'close' },
        body: JSON.stringify({ title }),
      });
      created.push(JSON.parse(res.body) as Task);
    }
    for (const deadline = Date.now() + 10_000; heard.length < created.length && Date.now() < deadline; ) await sleep(50);
    t.assert.deepStrictEqual(heard, created, 'every task, in order');
    socket.close();
    t.assert.strictEqual((await request(`${base}/tasks/live`)).status, 426);
    await stop(t, started);
  });

  test('7. an image: built, served, stopped by SIGTERM with exit code 0', {
    skip: skipPodman,
    timeout: 900_000,
  }, async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(7), ['Dockerfile', '.dockerignore']);
    // deploy/image-build.sh: podman build as `docker build -t tasks .` does, the base image found or assembled first
    await run(root, 'bash', ['deploy/image-build.sh', 'tasks', project], { timeout: 840_000 });
    const [image] = JSON.parse(await podman(['image', 'inspect', 'tasks'])) as { Config: { User?: string; Cmd?: string[] } }[];
    t.assert.strictEqual(image?.Config.User, 'node');
    t.assert.deepStrictEqual(image?.Config.Cmd, ['node_modules/.bin/flotilla', 'start', '--config', 'app.yaml']);

    const container = `tasks-tutorial-${process.pid}`;
    t.after(() => podman(['rm', '--force', '--time', '0', container]).catch(() => undefined));
    await podman([
      'run',
      '--detach',
      '--name',
      container,
      ...podmanRunOptions(),
      '-e',
      `TASKS_API_TOKEN=${TOKEN}`,
      '--publish',
      '127.0.0.1::3000',
      'tasks',
    ]);
    const mapped = await podman(['port', container, '3000/tcp']);
    const base = `http://127.0.0.1:${/:(\d+)$/m.exec(mapped)?.[1]}`;
    const alive = async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', container]);
      if (state !== 'running') throw new Error(`the container is ${state}:\n${await podman(['logs', container])}`);
    };
    t.assert.strictEqual(await until200(`${base}/health`, alive), 200);
    t.assert.strictEqual((await post(base, { title: 'Ship it' }, TOKEN)).status, 201);
    t.assert.strictEqual((await request(`${base}/docs`)).status, 404, 'NODE_ENV=production: no docs page');

    await podman(['stop', '--time', '30', container]);
    t.assert.strictEqual(await podman(['inspect', '--format', '{{.State.ExitCode}}', container]), '0');
    const logs = logLines(`${await podman(['logs', container])}\n`);
    t.assert.ok(logs.some((line) => line['msg'] === 'primary shutdown: done' && line['ok'] === true && line['pid'] === 1));
  });

  test('8. Kubernetes: the manifests played by podman kube play, the data kept on the volume', {
    skip: skipPodman,
    timeout: 600_000,
  }, async (t: TestContext) => {
    t.assert.deepStrictEqual(writeStep(8), ['k8s/tasks.yaml']);
    const manifests = parseAllDocuments(readFileSync(join(project, 'k8s/tasks.yaml'), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw d.errors[0];
      // biome-ignore lint/suspicious/noExplicitAny: a manifest is walked by key
      return d.toJS() as Record<string, any>;
    });
    t.assert.deepStrictEqual(
      manifests.map((m) => m['kind']),
      ['PersistentVolumeClaim', 'Deployment', 'Service'],
    );
    const deployment = manifests[1]!;
    const container = deployment['spec']['template']['spec']['containers'][0];
    t.assert.strictEqual(manifests[2]!['spec']['ports'][0]['targetPort'], 'http');

    // What `kubectl create secret` and a Service do in a cluster, podman needs said: the Secret as podman
    // keeps it, and the port published on the host (hostPort). The manifest is otherwise played as written.
    await podman(['tag', 'tasks', 'tasks:1.0.0']);
    // what an earlier run may have left (a failed `kube play` leaves its volume), and this one leaves
    const cleanUp = async () => {
      await podman(['pod', 'rm', '--force', '--time', '0', 'tasks-pod-0']).catch(() => undefined);
      const users = (await podman(['ps', '--all', '--quiet', '--filter', 'volume=tasks-data'])).split('\n').filter(Boolean);
      if (users.length > 0) await podman(['rm', '--force', '--time', '0', ...users]);
      await podman(['volume', 'rm', '--force', 'tasks-data']).catch(() => undefined);
      await podman(['secret', 'rm', 'tasks']).catch(() => undefined);
    };
    await cleanUp();
    t.after(cleanUp);
    t.assert.strictEqual(
      await podman(['volume', 'ls', '--quiet', '--filter', 'name=^tasks-data$']),
      '',
      'no volume tasks-data before the play',
    );
    const secret = JSON.stringify({ apiToken: Buffer.from(TOKEN).toString('base64') });
    await run(project, 'sh', ['-c', `printf '%s' '${secret}' | podman secret create tasks -`]);
    const port = await freePort();
    for (const p of container['ports'] as { name: string; hostPort?: number; hostIP?: string }[]) {
      if (p.name === 'http') Object.assign(p, { hostPort: port, hostIP: '127.0.0.1' });
    }
    const played = join(work, 'tasks-played.yaml');
    writeFileSync(played, manifests.map((m) => stringify(m)).join('---\n'));
    const env = { CONTAINERS_CONF: kubePlayConf(work) };
    const base = `http://127.0.0.1:${port}`;
    const name = async () =>
      (await podman(['ps', '-a', '--filter', 'pod=tasks-pod-0', '--format', '{{.Names}}'])).split('\n').find((n) => !n.endsWith('-infra'))!;
    const alive = async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', await name()]);
      if (state !== 'running') throw new Error(`the container is ${state}:\n${await podman(['logs', await name()])}`);
    };

    await podman(['kube', 'play', played], env);
    t.assert.strictEqual(await until200(`${base}/health`, alive), 200);
    t.assert.strictEqual((await post(base, { title: 'Deployed' }, TOKEN)).status, 201);
    await podman(['pod', 'stop', '--time', '30', 'tasks-pod-0']);
    t.assert.strictEqual(await podman(['inspect', '--format', '{{.State.ExitCode}}', await name()]), '0', 'stopped by SIGTERM, exit 0');
    await podman(['kube', 'down', played], env);

    // a new pod, as a rollout makes: the claim stays as it is (podman refuses to create its volume twice)
    const podOnly = join(work, 'tasks-pod.yaml');
    writeFileSync(podOnly, stringify(deployment));
    await podman(['kube', 'play', podOnly], env);
    t.assert.strictEqual(await until200(`${base}/health`, alive), 200);
    const list = JSON.parse((await request(`${base}/tasks`)).body) as { data: Task[] };
    t.assert.ok(
      list.data.some((task) => task.title === 'Deployed'),
      'the task is still there: the volume outlived the pod',
    );
    await podman(['kube', 'down', podOnly], env);
  });
});
