import { resolve } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import pino from 'pino';
import { Lifecycle } from '../../../src/app/lifecycle/lifecycle.ts';
import type { StartSchedulers } from '../../../src/app/lifecycle/schedulers.ts';
import { InFlight } from '../../../src/app/overload/in-flight.ts';
import { resolveConfig } from '../../../src/config/validate.ts';
import type { Scheduler } from '../../../src/scheduler/scheduler.ts';
import { httpRequest } from '../../helpers/http.ts';
import { importGraph } from '../../helpers/import-graph.ts';

/** A lifecycle on 127.0.0.1 that answers `ok`, starting its schedulers with `schedulers`. */
function lifecycleWith(schedulers: StartSchedulers): Lifecycle {
  const config = resolveConfig({ port: 0, host: '127.0.0.1', logging: { level: 'silent' } });
  return new Lifecycle({
    config,
    logger: pino({ level: 'silent' }),
    role: 'standalone',
    binding: {
      handler: (_req, res) => void res.end('ok'),
      admission: undefined,
      upgrade: (_req, socket) => void socket.destroy(),
      reusePort: false,
      source: undefined,
    },
    start: { hooks: [], schedulers },
    shutdown: {
      inFlight: new InFlight(),
      deadline: new AbortController(),
      drain: new AbortController(),
      hooks: [],
      sockets: async () => {},
    },
    metricsEndpoint: undefined,
    handleSignals: false,
  });
}

const scheduler: Scheduler = { start: () => {}, stop: () => {} };

describe('the schedulers’ start the App hands its lifecycle', () => {
  test('runs in listen(), before ready() resolves; a scheduler then stops through what it returned', async (t: TestContext) => {
    const events: string[] = [];
    let lifecycle: Lifecycle | undefined;
    lifecycle = lifecycleWith(async () => {
      events.push(`start (state ${lifecycle?.state})`);
      return { stop: async (stopped, signal) => void events.push(`stop ${stopped === scheduler} aborted=${signal.aborted}`) };
    });
    const listening = lifecycle.listen();
    const { port } = await lifecycle.ready();
    t.assert.equal((await httpRequest(port, '/')).body, 'ok');
    await lifecycle.stopScheduler(scheduler, new AbortController().signal);
    await lifecycle.close();
    await listening;
    t.assert.deepStrictEqual(events, ['start (state starting)', 'stop true aborted=false']);
  });

  test('a start that fails makes listen() and ready() reject with its error', async (t: TestContext) => {
    const lifecycle = lifecycleWith(() => Promise.reject(new Error('no coordinator')));
    await t.assert.rejects(lifecycle.listen(), /no coordinator/);
    await t.assert.rejects(lifecycle.ready(), /no coordinator/);
    t.assert.equal(lifecycle.state, 'closed');
  });

  test('before the start, a scheduler stops by its own stop', async (t: TestContext) => {
    const stopped: string[] = [];
    const lifecycle = lifecycleWith(async () => ({ stop: async () => void stopped.push('through the start') }));
    await lifecycle.stopScheduler({ start: () => {}, stop: () => void stopped.push('its own') }, new AbortController().signal);
    t.assert.deepStrictEqual(stopped, ['its own']);
  });

  test('src/app/lifecycle imports nothing of src/coordination: the start is handed in', (t: TestContext) => {
    const graph = importGraph(resolve(import.meta.dirname, '../../../src'));
    const reaching = [...graph]
      .filter(([file]) => file.startsWith('app/lifecycle/'))
      .flatMap(([file, edges]) => edges.filter((e) => e.to.startsWith('coordination/')).map((e) => `${file} imports ${e.to}`));
    t.assert.deepStrictEqual(reaching, []);
  });
});
