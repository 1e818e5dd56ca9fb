import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../../src/config/validate.ts';
import { describeInvalid, isWorkerMessage, msg } from '../../src/ipc/protocol.ts';
import { encodeWorkerStart, WORKER_ENV } from '../../src/process/worker-env.ts';
import { get } from '../helpers/cluster.ts';

/**
 * Forged IPC reaching a real worker: `src/worker/worker-main.ts` forked
 * directly (as node:cluster would, minus the cluster), sent garbage and
 * malformed `flotilla:*` messages in place of the primary. It logs and drops
 * each flotilla one (answering none of them: no pong for a forged ping, no
 * metrics for the request protocol 1 had), ignores the rest, keeps serving,
 * still answers a real heartbeat with its vitals, and still shuts down
 * cleanly on a real shutdown message, pushing its final metrics first.
 */

const WORKER_MAIN = fileURLToPath(new URL('../../src/worker/worker-main.ts', import.meta.url));
const SERVICE = fileURLToPath(new URL('../fixtures/cluster/service.ts', import.meta.url));
const DROPPED = 'malformed message from the primary dropped';

const VITALS = { rss: 1, requests: 1, elu: 0, delayP50Ms: 0, delayP99Ms: 0, delayMaxMs: 0 };

const FORGED: [message: unknown, reason: RegExp][] = [
  [{ type: 'flotilla:shutdown' }, /^flotilla:shutdown: v must be 7$/],
  [{ v: 1, type: 'flotilla:shutdown', deadline: 1 }, /^flotilla:shutdown: v must be 7$/],
  [{ v: 8, type: 'flotilla:shutdown', deadline: 1 }, /^flotilla:shutdown: v must be 7$/],
  [{ v: '7', type: 'flotilla:shutdown', deadline: 1 }, /^flotilla:shutdown: v must be 7$/],
  [{ v: 7, type: 'flotilla:shutdown', deadline: -1 }, /^flotilla:shutdown: deadline must be a finite time/],
  [{ v: 7, type: 'flotilla:shutdown', deadline: 'soon' }, /^flotilla:shutdown: deadline must be a finite time/],
  [{ v: 7, type: 'flotilla:shutdown', deadline: 1, retire: false, force: true }, /^flotilla:shutdown: unexpected field "force"$/],
  [{ v: 7, type: 'flotilla:shutdown', deadline: 1 }, /^flotilla:shutdown: retire is missing$/],
  [{ v: 1, type: 'flotilla:ping', seq: 1 }, /^flotilla:ping: v must be 7$/],
  [{ v: 7, type: 'flotilla:ping' }, /^flotilla:ping: seq is missing$/],
  [{ v: 7, type: 'flotilla:ping', seq: -1 }, /^flotilla:ping: seq must be a non-negative integer$/],
  [{ v: 7, type: 'flotilla:ping', seq: 1.5 }, /^flotilla:ping: seq must be a non-negative integer$/],
  [{ v: 7, type: 'flotilla:ping', seq: '1' }, /^flotilla:ping: seq must be a non-negative integer$/],
  [{ v: 7, type: 'flotilla:ping', seq: 2 ** 53 }, /^flotilla:ping: seq must be a non-negative integer$/],
  [{ v: 7, type: 'flotilla:ping', seq: { valueOf: 1 } }, /^flotilla:ping: seq must be a non-negative integer$/],
  [{ v: 7, type: 'flotilla:ping', seq: 1, id: 'm-1' }, /^flotilla:ping: unexpected field "id"$/],
  // protocol 1's metrics request: nothing answers it any more
  [{ v: 1, type: 'flotilla:metrics-request', id: 'm-1' }, /^unknown type "flotilla:metrics-request"$/],
  [{ v: 7, type: 'flotilla:metrics-request', id: 'm-1' }, /^unknown type "flotilla:metrics-request"$/],
  [msg.listening(1, { host: '127.0.0.1', port: 1 }), /^flotilla:listening: valid, but it goes from a worker to the primary$/],
  [msg.pong(1, VITALS), /^flotilla:pong: valid, but it goes from a worker to the primary$/],
  [msg.metrics([]), /^flotilla:metrics: valid, but it goes from a worker to the primary$/],
  [msg.bootFailed(1, 'service', 'x'), /^flotilla:boot-failed: valid, but it goes from a worker to the primary$/],
  [{ v: 7, type: `flotilla:${'z'.repeat(100_000)}` }, /^unknown type "flotilla:z+…"$/],
];
const GARBAGE: unknown[] = [
  'garbage',
  42,
  null,
  false,
  [1, 2],
  { type: 'other:thing' },
  { type: ['flotilla:shutdown'] },
  'y'.repeat(1_000_000),
];

interface Worker {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  messages: Record<string, unknown>[];
  until<T>(check: () => T | undefined, what: string): Promise<T>;
}

function forkWorker(): Worker {
  // balancing: kernel, so that the worker listens itself (with `primary` the primary hands it its connections)
  const config = resolveConfig({
    serviceName: 'forged',
    host: '127.0.0.1',
    port: 0,
    logging: { level: 'info' },
    cluster: { balancing: 'kernel' },
  });
  const child = fork(WORKER_MAIN, [], {
    execArgv: ['--conditions=source'],
    env: { ...process.env, [WORKER_ENV]: encodeWorkerStart({ config, servicePath: SERVICE, slot: 0 }) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const worker: Worker = {
    child,
    lines: [],
    messages: [],
    until: (check, what) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = () => {
          const value = check();
          if (value !== undefined) resolve(value);
          else if (Date.now() - started > 10_000) reject(new Error(`timed out waiting for ${what}; stderr: ${stderr.slice(-2000)}`));
          else setTimeout(poll, 10);
        };
        poll();
      }),
  };
  let buffered = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      worker.lines.push(JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>);
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.on('message', (message: Record<string, unknown>) => worker.messages.push(message));
  return worker;
}

test('a forked worker drops and logs forged primary messages, keeps serving, and still obeys real ones', async (t) => {
  const worker = forkWorker();
  const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
  t.after(() => worker.child.kill('SIGKILL'));
  const listening = await worker.until(() => worker.messages.find((m) => m['type'] === 'flotilla:listening'), 'flotilla:listening');
  const { port } = listening['address'] as { port: number };
  assert.equal(listening['pid'], worker.child.pid);

  for (const message of [...GARBAGE, ...FORGED.map(([m]) => m)]) worker.child.send(message as never);
  const dropped = await worker.until(() => {
    const lines = worker.lines.filter((l) => l['msg'] === DROPPED);
    return lines.length >= FORGED.length ? lines : undefined;
  }, `${FORGED.length} × ${DROPPED}`);
  assert.equal(dropped.length, FORGED.length, 'garbage that does not claim to be a flotilla message is ignored, not logged');
  for (const [i, [, reason]] of FORGED.entries()) assert.match(String(dropped[i]?.['message']), reason);
  assert.equal(dropped[0]?.['level'], 'warn');

  assert.deepEqual(JSON.parse((await get(port, '/who')).body), { pid: worker.child.pid });
  worker.child.send(msg.ping(7));
  const pong = await worker.until(() => worker.messages.find((m) => m['type'] === 'flotilla:pong'), 'the heartbeat answer');
  // IPC keeps the order of messages both ways: a pong for any forged ping would have come before this one
  assert.deepEqual(
    worker.messages.filter((m) => m['type'] === 'flotilla:pong').map((m) => m['seq']),
    [7],
    'only the real ping is answered',
  );
  assert.ok(isWorkerMessage(pong), describeInvalid(pong));
  assert.ok((pong['rss'] as number) > 0);
  assert.ok((pong['requests'] as number) >= 1, 'the GET /who is counted');
  assert.equal(
    worker.messages.some((m) => m['type'] === 'flotilla:metrics-response'),
    false,
    'no answer to the metrics request protocol 1 had',
  );
  assert.deepEqual(worker.messages.filter((m) => !isWorkerMessage(m)).map(describeInvalid), [], 'everything the worker sends is valid');

  worker.child.send(msg.shutdown(Date.now() + 5_000));
  const complete = await worker.until(() => worker.messages.find((m) => m['type'] === 'flotilla:shutdown-complete'), 'shutdown-complete');
  assert.equal(complete['ok'], true);
  // the final snapshot comes before shutdown-complete, with what this worker served
  const final = worker.messages.findIndex((m) => m['type'] === 'flotilla:metrics' && m['final'] === true);
  assert.ok(final !== -1 && final < worker.messages.indexOf(complete), 'a final metrics snapshot, before shutdown-complete');
  const families = worker.messages[final]?.['metrics'] as { name: string; series: string[] }[];
  assert.ok(families.some((m) => m.name === 'http_requests_total' && m.series.some((s) => s.includes('route="/who"'))));
  // As under node:cluster, the primary's disconnect after shutdown-complete lets the worker exit.
  if (worker.child.connected) worker.child.disconnect();
  assert.equal(await exited, 0);
  assert.equal(
    worker.lines.some((l) => l['msg'] === 'worker shutting down' && l['reason'] === 'primary'),
    true,
  );
});
