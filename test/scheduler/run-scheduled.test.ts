import { describe, type TestContext, test } from 'node:test';
import { currentContext } from '../../src/app/core/current-context.ts';
import { ServicePart } from '../../src/app/service-part.ts';
import { resolveConfig } from '../../src/config/validate.ts';
import { FlotillaError } from '../../src/errors/flotilla-error.ts';
import { type CronFire, CronScheduler } from '../../src/scheduler/cron-scheduler.ts';
import { gate, serve, testApp } from '../helpers/app.ts';

/** Once a day at 06:00: never due while a test runs, so every run below is `runScheduled`'s. */
const DAILY = '0 0 6 * * *';

/** A standalone App logging into a sink, closed after the test. */
function quietApp(t: TestContext, config = {}) {
  const made = testApp({ logging: { level: 'info' }, ...config });
  t.after(() => made.app.close());
  return made;
}

describe('app.runScheduled(name)', () => {
  test('runs the job once, now, on an App that does not listen; resolves when the run is over', async (t: TestContext) => {
    const { app } = quietApp(t);
    const runs: { signal: AbortSignal; fire: CronFire; requestId: string | undefined }[] = [];
    let finished = false;
    app.registerScheduler(
      new CronScheduler([
        { name: 'other', cron: DAILY, run: () => t.assert.fail('only the job named runs') },
        {
          name: 'report',
          cron: DAILY,
          run: async (signal, fire) => {
            runs.push({ signal, fire, requestId: currentContext()?.requestId });
            await new Promise((resolve) => setTimeout(resolve, 20));
            finished = true;
          },
        },
      ]),
    );

    const before = Date.now();
    await app.runScheduled('report');

    t.assert.strictEqual(finished, true, 'resolved once the run finished');
    t.assert.strictEqual(runs.length, 1);
    const [run] = runs;
    t.assert.strictEqual(run?.signal.aborted, false);
    t.assert.ok(run !== undefined && run.fire.date.getTime() >= before, 'the fire is now');
    t.assert.strictEqual(run?.fire.key, `report:${run?.fire.date.toISOString()}`);
    t.assert.strictEqual(run?.requestId, `job:${run?.fire.key}`, "currentContext() is the run's own, as a fire's");
  });

  test("rejects with the job's error; the job can run again after", async (t: TestContext) => {
    const { app } = quietApp(t);
    let calls = 0;
    app.registerScheduler(
      new CronScheduler([
        {
          name: 'flaky',
          cron: DAILY,
          run: () => {
            calls++;
            if (calls === 1) throw new Error('the report server is down');
          },
        },
      ]),
    );

    await t.assert.rejects(app.runScheduled('flaky'), /the report server is down/);
    await app.runScheduled('flaky');
    t.assert.strictEqual(calls, 2);
  });

  test('never overlaps a run of the same job: a second call waits for the first to end', async (t: TestContext) => {
    const { app } = quietApp(t);
    const events: string[] = [];
    const release = gate();
    let n = 0;
    app.registerScheduler(
      new CronScheduler([
        {
          name: 'sync',
          cron: DAILY,
          run: async () => {
            const mine = ++n;
            events.push(`start ${mine}`);
            if (mine === 1) await release.promise;
            events.push(`end ${mine}`);
          },
        },
      ]),
    );

    const first = app.runScheduled('sync');
    const second = app.runScheduled('sync');
    await new Promise((resolve) => setImmediate(resolve));
    t.assert.deepStrictEqual(events, ['start 1'], 'the second run waits');
    release.resolve();
    await Promise.all([first, second]);
    t.assert.deepStrictEqual(events, ['start 1', 'end 1', 'start 2', 'end 2']);
  });

  test("the run's signal aborts when the App's shutdown deadline passes; a closed App runs no more", async (t: TestContext) => {
    const { app } = quietApp(t, { shutdown: { timeoutMs: 200 } });
    const started = gate();
    app.registerScheduler(
      new CronScheduler([
        {
          name: 'long',
          cron: DAILY,
          run: (signal) =>
            new Promise<void>((_resolve, reject) => {
              started.resolve();
              signal.addEventListener('abort', () => reject(new Error('aborted by the shutdown')), { once: true });
            }),
        },
      ]),
    );

    const running = app.runScheduled('long');
    await started.promise;
    const closed = app.close();
    await t.assert.rejects(running, /aborted by the shutdown/);
    await closed;
    await t.assert.rejects(app.runScheduled('long'), (error: unknown) => {
      t.assert.ok(error instanceof FlotillaError);
      t.assert.strictEqual(error.code, 'FLO_ERR_JOB_NOT_RUNNABLE');
      t.assert.match(error.message, /^runScheduled\("long"\): its scheduler has stopped/);
      return true;
    });
  });

  test('on a listening App, the run is logged and counted as a fire is, marked manual', async (t: TestContext) => {
    const { app, logs } = testApp({ logging: { level: 'info' }, metrics: { port: 0, host: '127.0.0.1' } }, { serveMetrics: false });
    app.registerScheduler(new CronScheduler([{ name: 'report', cron: DAILY, run: () => {} }]));
    await serve(t, app);

    await app.runScheduled('report');

    const line = await logs.waitFor((l) => l['msg'] === 'scheduled job succeeded');
    t.assert.strictEqual(line['job'], 'report');
    t.assert.strictEqual(line['manual'], true);
    const text = await app.registry.metrics();
    t.assert.match(text, /^flotilla_scheduler_runs_total\{job="report",outcome="success"\} 1$/m);
  });

  test('an unknown name rejects with FLO_ERR_UNKNOWN_JOB, naming the jobs there are', async (t: TestContext) => {
    const { app } = quietApp(t);
    app.registerScheduler(new CronScheduler([{ name: 'report', cron: DAILY, run: () => {} }]));
    app.registerScheduler({ start() {}, stop() {} }); // a scheduler without jobs of its own
    await t.assert.rejects(app.runScheduled('reprot'), (error: unknown) => {
      t.assert.ok(error instanceof FlotillaError);
      t.assert.strictEqual(error.code, 'FLO_ERR_UNKNOWN_JOB');
      t.assert.strictEqual(error.message, 'runScheduled("reprot"): no registered scheduler has a job of that name; the jobs are "report"');
      return true;
    });
  });

  test('a cluster worker (runSchedulers: false) runs no job: its schedulers run in the primary', async (t: TestContext) => {
    const { app } = testApp({ logging: { level: 'silent' } }, { runSchedulers: false, role: 'worker' });
    t.after(() => app.close());
    app.registerScheduler(new CronScheduler([{ name: 'report', cron: DAILY, run: () => t.assert.fail('not in a worker') }]));
    await t.assert.rejects(app.runScheduled('report'), (error: unknown) => {
      t.assert.ok(error instanceof FlotillaError);
      t.assert.strictEqual(error.code, 'FLO_ERR_JOB_NOT_RUNNABLE');
      t.assert.match(error.message, /the primary runs them/);
      return true;
    });
  });

  test("the primary's service part runs its jobs too (a beforeServe hook, say)", async (t: TestContext) => {
    const part = new ServicePart(resolveConfig({ logging: { level: 'silent' } }));
    let ran = 0;
    part.registerScheduler(new CronScheduler([{ name: 'warm-cache', cron: DAILY, run: () => void ran++ }]));
    await part.runScheduled('warm-cache');
    t.assert.strictEqual(ran, 1);
    await part.close(Date.now() + 1_000);
  });
});
