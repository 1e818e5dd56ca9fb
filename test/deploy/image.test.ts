import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { podmanRunOptions } from '../helpers/podman.ts';
import { requireTool } from '../helpers/require-tool.ts';

// The Dockerfile built for real and its image run: deploy/image-build.sh builds it with podman (chroot isolation;
// where node:24-slim cannot be pulled, on a stand-in it assembles first), then a container of it answers /health,
// passes its own HEALTHCHECK and stops cleanly on SIGTERM, the STOPSIGNAL `podman stop` sends.
const root = resolve(import.meta.dirname, '../..');
const TAG = 'localhost/flotilla-books:test';
const container = `flotilla-image-test-${process.pid}`;
// npm test installs podman where it can (tools/provision.sh); in CI these tests must run, elsewhere it may be absent
const skip = requireTool('podman');
const exec = promisify(execFile);
let built = false;
let running = false;

/** Runs a command; on failure, the error says its output. */
async function sh(file: string, args: string[], timeout: number): Promise<string> {
  try {
    const { stdout } = await exec(file, args, { cwd: root, timeout, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${file} ${args.join(' ')} failed: ${(error as Error).message.split('\n')[0]}\n${tail}`);
  }
}

const podman = (args: string[], timeout = 60_000) => sh('podman', args, timeout);

async function status(url: string): Promise<number> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  await response.body?.cancel();
  return response.status;
}

after(async () => {
  if (running) await podman(['rm', '--force', '--time', '0', container]).catch(() => undefined);
});

test('the Dockerfile builds with podman', { skip, timeout: 10 * 60_000 }, async () => {
  await sh('bash', ['deploy/image-build.sh', TAG], 9 * 60_000);
  const [image] = JSON.parse(await podman(['image', 'inspect', TAG])) as {
    Config: { User?: string; StopSignal?: string; Cmd?: string[]; Env?: string[]; ExposedPorts?: Record<string, unknown> };
    Healthcheck?: { Test?: string[] };
  }[];
  assert.ok(image);
  assert.equal(image.Config.User, 'node');
  assert.equal(image.Config.StopSignal, 'SIGTERM');
  assert.ok(image.Config.Env?.includes('NODE_ENV=production'), 'NODE_ENV=production: env follows it (no docs, no internal details)');
  assert.deepEqual(image.Config.Cmd, ['node', 'dist/cli/main.js', 'start', '--config', 'config/app.yaml']);
  assert.deepEqual(Object.keys(image.Config.ExposedPorts ?? {}).sort(), ['3000/tcp', '9464/tcp']);
  assert.equal(image.Healthcheck?.Test?.[1], 'node', 'the HEALTHCHECK is kept (Docker image format) and runs node');
  built = true;
});

test('a container of the image answers /health and passes its HEALTHCHECK', { skip, timeout: 2 * 60_000 }, async () => {
  assert.ok(built, 'the image was built');
  running = true; // removed after the tests, even if it was created but did not start
  await podman([
    'run',
    '--detach',
    '--name',
    container,
    ...podmanRunOptions(),
    // production: the example's secrets must come from the environment (their development fallbacks are refused)
    ...['COOKIE_SECRET=an-image-test-secret-of-32-characters', 'BOOKS_API_KEY=image-key', 'BOOKS_READER_PASSWORD=image-pw'].flatMap((v) => [
      '--env',
      v,
    ]),
    '--publish',
    '127.0.0.1::3000',
    '--publish',
    '127.0.0.1::9464',
    TAG,
  ]);
  const port = async (inside: number) => Number(/:(\d+)$/m.exec(await podman(['port', container, `${inside}/tcp`]))?.[1]);
  const api = await port(3000);
  const metrics = await port(9464);

  let health: Response | undefined;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
    health = await fetch(`http://127.0.0.1:${api}/health`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
    if (health?.status === 200) break;
    const state = await podman(['inspect', '--format', '{{.State.Status}}', container]);
    if (state !== 'running') assert.fail(`the container is ${state}:\n${await podman(['logs', container])}`);
  }
  assert.equal(health?.status, 200, 'GET /health answers 200 within a minute');
  assert.equal(((await health.json()) as { status: string }).status, 'pass');
  assert.equal(await status(`http://127.0.0.1:${api}/api/books/42`), 200, 'a worker serves the example');
  assert.equal(await status(`http://127.0.0.1:${metrics}/metrics`), 200, 'the metrics port answers');
  assert.equal(await status(`http://127.0.0.1:${api}/docs`), 404, 'production, from NODE_ENV: no docs page');

  assert.equal(await podman(['exec', container, 'id', '-u']), '1000', 'runs as the node user');
  await podman(['healthcheck', 'run', container]);
});

test('SIGTERM stops the container cleanly', { skip, timeout: 2 * 60_000 }, async () => {
  assert.ok(running, 'the container was started');
  // The image's STOPSIGNAL, then SIGKILL after 30 s (exit code 137) if the primary did not exit by itself.
  await podman(['stop', '--time', '30', container], 45_000);
  assert.equal(await podman(['inspect', '--format', '{{.State.ExitCode}}', container]), '0', 'exited by itself, with code 0');
  const lines = (await podman(['logs', container]))
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { pid?: number; role?: string; msg?: string; ok?: boolean });
  assert.ok(
    lines.some((l) => l.role === 'primary' && l.pid === 1),
    'the primary is PID 1 (exec form, through the entrypoint), so SIGTERM reaches it',
  );
  assert.ok(
    lines.some((l) => l.msg === 'primary shutdown: done' && l.ok === true),
    'the primary shut down gracefully',
  );
});
