import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { pino } from 'pino';
import { type MetricValue, Registry } from 'prom-client';
import { currentContext } from '../../src/app/core/current-context.ts';
import type { RequestContext } from '../../src/app/core/request-context.ts';
import { type CronFire, type CronJob, CronScheduler } from '../../src/scheduler/cron-scheduler.ts';
import type { FireCoordinator } from '../../src/scheduler/scheduler.ts';
import { schedulerContract } from './scheduler-contract.ts';

schedulerContract('CronScheduler', (run) => new CronScheduler([{ name: 'contract', cron: '* * * * * *', run }]));

type Line = Record<string, unknown> & { level: number; msg: string };

/** A pino logger writing into memory; `next(pred)` resolves with the first line (past or future) matching. */
function logSink() {
  const lines: Line[] = [];
  const waiters: { pred: (l: Line) => boolean; resolve: (l: Line) => void }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const text of String(chunk).split('\n').filter(Boolean)) {
        const line = JSON.parse(text) as Line;
        lines.push(line);
        for (const w of waiters.filter((w) => w.pred(line))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
      callback();
    },
  });
  return {
    logger: pino({ level: 'debug' }, stream),
    lines,
    next: (pred: (l: Line) => boolean) =>
      new Promise<Line>((resolve) => {
        const seen = lines.find(pred);
        if (seen) resolve(seen);
        else waiters.push({ pred, resolve });
      }),
  };
}

interface RecordedSpan {
  name: string;
  options: SpanOptions;
  status?: SpanStatus;
  exceptions: unknown[];
  ended: boolean;
}

/** A Tracer that records the spans it starts. */
function recordingTracer() {
  const spans: RecordedSpan[] = [];
  const spanContext: SpanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
  const startSpan = (name: string, options: SpanOptions = {}): Span => {
    const rec: RecordedSpan = { name, options, exceptions: [], ended: false };
    spans.push(rec);
    const span: Span = {
      spanContext: () => spanContext,
      setAttribute: () => span,
      setAttributes: () => span,
      addEvent: () => span,
      addLink: () => span,
      addLinks: () => span,
      setStatus: (status) => {
        rec.status = status;
        return span;
      },
      updateName: () => span,
      end: () => {
        rec.ended = true;
      },
      isRecording: () => true,
      recordException: (e) => void rec.exceptions.push(e),
    };
    return span;
  };
  const tracer = { startSpan, startActiveSpan: () => assert.fail('not used') } as unknown as Tracer;
  return { tracer, spans };
}

/** Enough of a context manager for `context.with` to be visible to the synchronous part of a run. */
function stackContextManager(): ContextManager {
  const stack: Context[] = [];
  return {
    active: () => stack.at(-1) ?? ROOT_CONTEXT,
    with(ctx, fn, thisArg, ...args) {
      stack.push(ctx);
      try {
        return fn.call(thisArg, ...args);
      } finally {
        stack.pop();
      }
    },
    bind: (_ctx, target) => target,
    enable() {
      return this;
    },
    disable() {
      stack.length = 0;
      return this;
    },
  };
}

/** Fake clock at half past a second, so each `advance` crosses exactly one cron second. */
function fakeClock(t: TestContext) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2030-01-01T00:00:00.500Z') });
  return async (seconds = 1) => {
    for (let i = 0; i < seconds; i++) {
      t.mock.timers.tick(1_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

function bound(jobs: CronJob[]) {
  const sink = logSink();
  const registry = new Registry();
  const { tracer, spans } = recordingTracer();
  const scheduler = new CronScheduler(jobs);
  scheduler.bind({ logger: sink.logger, registry, tracer });
  return { scheduler, sink, registry, spans };
}

async function runCount(registry: Registry, job: string, outcome: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric('flotilla_scheduler_runs_total')?.get();
  return metric?.values.find((v) => v.labels['job'] === job && v.labels['outcome'] === outcome)?.value;
}

async function durationCount(registry: Registry, job: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric('flotilla_scheduler_run_duration_seconds')?.get();
  const values = metric?.values as (MetricValue<string> & { metricName?: string })[] | undefined;
  return values?.find((v) => v.metricName === 'flotilla_scheduler_run_duration_seconds_count' && v.labels['job'] === job)?.value;
}

const INFO = 30;
const WARN = 40;
const ERROR = 50;

describe('CronScheduler construction', () => {
  const run = () => {};

  it('accepts 5- and 6-field expressions', () => {
    new CronScheduler([
      { name: 'minutely', cron: '*/5 * * * *', run },
      { name: 'secondly', cron: '*/10 * * * * *', run },
    ]);
  });

  it('rejects an invalid cron expression, naming the job', () => {
    assert.throws(() => new CronScheduler([{ name: 'report', cron: '61 * * * *', run }]), {
      name: 'TypeError',
      message: /job "report" has an invalid cron expression "61 \* \* \* \*": 61 is a invalid expression for minute/,
    });
    assert.throws(() => new CronScheduler([{ name: 'report', cron: 'every day', run }]), /job "report" has an invalid cron expression/);
  });

  it('rejects duplicate and empty names', () => {
    assert.throws(
      () =>
        new CronScheduler([
          { name: 'a', cron: '* * * * *', run },
          { name: 'a', cron: '* * * * *', run },
        ]),
      { name: 'TypeError', message: /job "a" is defined twice/ },
    );
    assert.throws(() => new CronScheduler([{ name: ' ', cron: '* * * * *', run }]), {
      name: 'TypeError',
      message: /job #0 needs a non-empty/,
    });
  });

  it('rejects a missing run function and an unknown time zone', () => {
    assert.throws(() => new CronScheduler([{ name: 'x', cron: '* * * * *' } as CronJob]), /job "x" needs a run function/);
    assert.throws(() => new CronScheduler([], { timezone: 'Mars/Olympus' }), /unknown time zone "Mars\/Olympus"/);
  });
});

describe('CronScheduler runs (fake clock)', () => {
  it('logs and counts a successful run, in a span of its own', async (t) => {
    const manager = stackContextManager();
    context.setGlobalContextManager(manager);
    t.after(() => context.disable());
    const advance = fakeClock(t);
    let activeSpan: Span | undefined;
    const { scheduler, sink, registry, spans } = bound([
      {
        name: 'report',
        cron: '* * * * * *',
        run: () => {
          activeSpan = trace.getActiveSpan();
        },
      },
    ]);
    assert.equal(await runCount(registry, 'report', 'success'), 0);
    scheduler.start();
    await advance();
    const line = await sink.next((l) => l['job'] === 'report');
    assert.equal(line.level, INFO);
    assert.equal(line['outcome'], 'success');
    assert.equal(typeof line['durationMs'], 'number');
    assert.equal(await runCount(registry, 'report', 'success'), 1);
    assert.equal(await durationCount(registry, 'report'), 1);
    assert.deepEqual(spans, [
      {
        name: 'cron report',
        options: { kind: SpanKind.INTERNAL, attributes: { 'flotilla.job.name': 'report' } },
        exceptions: [],
        ended: true,
      },
    ]);
    assert.ok(activeSpan, 'the run sees its span as the active one');
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('a run has its own context: currentContext() in the job, across awaits, and none outside', async (t) => {
    const advance = fakeClock(t);
    const seen: (RequestContext | undefined)[] = [];
    const { scheduler, sink } = bound([
      {
        name: 'report',
        cron: '* * * * * *',
        run: async (signal) => {
          await Promise.resolve();
          const context = currentContext();
          seen.push(context);
          assert.equal(context?.signal, signal);
          context?.logger.info('from the job');
        },
      },
    ]);
    scheduler.start();
    await advance();
    await sink.next((l) => l['msg'] === 'from the job');
    assert.match(seen[0]?.requestId ?? '', /^job:report:2030-01-01T00:00:01/);
    assert.deepEqual(seen[0]?.state, {});
    assert.equal(currentContext(), undefined);
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('logs and counts failures, thrown or rejected, with the error', async (t) => {
    const advance = fakeClock(t);
    const { scheduler, sink, registry, spans } = bound([
      { name: 'throws', cron: '* * * * * *', run: () => assert.fail('thrown boom') },
      { name: 'rejects', cron: '* * * * * *', run: () => Promise.reject(new Error('rejected boom')) },
    ]);
    scheduler.start();
    await advance(2);
    await sink.next((l) => l['job'] === 'rejects' && l['outcome'] === 'failure' && l.level === ERROR);
    const thrown = await sink.next((l) => l['job'] === 'throws' && l['outcome'] === 'failure');
    assert.equal(thrown.level, ERROR);
    assert.match((thrown['err'] as { message: string }).message, /thrown boom/);
    assert.equal(await runCount(registry, 'throws', 'failure'), 2);
    assert.equal(await runCount(registry, 'rejects', 'failure'), 2);
    assert.equal(await durationCount(registry, 'throws'), 2);
    const failed = spans.find((s) => s.name === 'cron rejects');
    assert.equal(failed?.status?.code, SpanStatusCode.ERROR);
    assert.equal((failed?.exceptions[0] as Error | undefined)?.message, 'rejected boom');
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('skips ticks while the previous run of the job is still running', async (t) => {
    const advance = fakeClock(t);
    let calls = 0;
    let release = () => {};
    const slow = () => {
      calls++;
      return new Promise<void>((resolve) => (release = resolve));
    };
    const { scheduler, sink, registry } = bound([{ name: 'slow', cron: '* * * * * *', run: slow }]);
    scheduler.start();
    await advance(3);
    assert.equal(calls, 1);
    assert.deepEqual(scheduler.running, ['slow']);
    const skipped = sink.lines.filter((l) => l['outcome'] === 'skipped');
    assert.equal(skipped.length, 2);
    assert.equal(skipped[0]?.level, WARN);
    assert.equal(await runCount(registry, 'slow', 'skipped'), 2);
    release();
    await sink.next((l) => l['outcome'] === 'success');
    await advance();
    assert.equal(calls, 2, 'runs again once the previous run finished');
    release();
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('runs nothing after stop, and start after stop does nothing', async (t) => {
    const advance = fakeClock(t);
    let calls = 0;
    const { scheduler } = bound([{ name: 'tick', cron: '* * * * * *', run: () => void calls++ }]);
    scheduler.start();
    await advance();
    await scheduler.stop(AbortSignal.timeout(1_000));
    scheduler.start();
    await advance(3);
    assert.equal(calls, 1);
  });

  it('stop with an aborted signal aborts running jobs and returns at once', async (t) => {
    const advance = fakeClock(t);
    const stuck = (signal: AbortSignal) =>
      new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const { scheduler, sink, registry } = bound([{ name: 'stuck', cron: '* * * * * *', run: stuck }]);
    scheduler.start();
    await advance();
    assert.deepEqual(scheduler.running, ['stuck']);
    await scheduler.stop(AbortSignal.abort(new Error('deadline')));
    const failed = await sink.next((l) => l['outcome'] === 'failure');
    assert.equal((failed['err'] as { message: string }).message, 'deadline', "the run saw stop's abort reason");
    assert.equal(await runCount(registry, 'stuck', 'failure'), 1);
    assert.deepEqual(scheduler.running, []);
  });

  it("reports node-cron's missed executions through the bound logger", async (t) => {
    fakeClock(t);
    const { scheduler, sink } = bound([{ name: 'tick', cron: '* * * * * *', run: () => {} }]);
    scheduler.start();
    t.mock.timers.tick(3_500); // one timer firing 3 s late: as if the event loop had been blocked
    const missed = await sink.next((l) => l['source'] === 'node-cron');
    assert.equal(missed.level, WARN);
    assert.match(missed.msg, /missed execution/);
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('shares a registry with another scheduler and tolerates being bound twice', async () => {
    const registry = new Registry();
    const env = { logger: pino({ enabled: false }), registry, tracer: trace.getTracer('test') };
    const a = new CronScheduler([{ name: 'a', cron: '* * * * *', run: () => {} }]);
    const b = new CronScheduler([{ name: 'b', cron: '* * * * *', run: () => {} }]);
    a.bind(env);
    a.bind(env);
    b.bind(env);
    assert.equal(await runCount(registry, 'a', 'skipped'), 0);
    assert.equal(await runCount(registry, 'b', 'failure'), 0);
  });
});

describe('CronScheduler with a coordinator (fake clock)', () => {
  /** A per-fire coordinator that records the claims and answers with `answer(key)`. */
  function coordinator(answer: (key: string) => boolean | Promise<boolean>) {
    const claims: { key: string; ttlMs: number }[] = [];
    const fires: FireCoordinator = {
      backend: 'test',
      ttlMs: 60_000,
      shouldRun: (key, ttlMs) => {
        claims.push({ key, ttlMs });
        return answer(key);
      },
    };
    return { fires, claims };
  }

  function coordinated(jobs: CronJob[], fires: FireCoordinator) {
    const sink = logSink();
    const registry = new Registry();
    const scheduler = new CronScheduler(jobs);
    scheduler.bind({ logger: sink.logger, registry, tracer: trace.getTracer('test'), coordinator: fires });
    return { scheduler, sink, registry };
  }

  async function skips(registry: Registry, job: string, reason: string): Promise<number | undefined> {
    const metric = await registry.getSingleMetric('flotilla_scheduler_runs_total')?.get();
    return metric?.values.find((v) => v.labels['job'] === job && v.labels['outcome'] === 'skipped' && v.labels['reason'] === reason)?.value;
  }

  it('claims each fire by its key and scheduled time, and runs the ones it wins with that key', async (t) => {
    const advance = fakeClock(t);
    const { fires, claims } = coordinator((key) => key.endsWith(':02.000Z'));
    const runs: CronFire[] = [];
    const { scheduler } = coordinated([{ name: 'tick', cron: '* * * * * *', run: (_signal, fire) => void runs.push(fire) }], fires);
    assert.equal(scheduler.coordination, 'per-fire');
    scheduler.start();
    await advance(3);
    assert.deepEqual(
      claims.map((c) => c.key),
      ['tick:2030-01-01T00:00:01.000Z', 'tick:2030-01-01T00:00:02.000Z', 'tick:2030-01-01T00:00:03.000Z'],
    );
    assert.ok(
      claims.every((c) => c.ttlMs === 60_000),
      "node-cron passes the coordinator's ttl back",
    );
    assert.deepEqual(
      runs.map((f) => [f.key, f.date.toISOString()]),
      [['tick:2030-01-01T00:00:02.000Z', '2030-01-01T00:00:02.000Z']],
    );
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('skips a fire the coordinator cannot decide, with its reason, logged and counted', async (t) => {
    const advance = fakeClock(t);
    const skew = Object.assign(new Error('clocks apart'), { reason: 'clock-skew' });
    const answers = [Promise.reject(new Error('connection refused')), Promise.reject(skew)];
    for (const a of answers) a.catch(() => {});
    const { fires } = coordinator(() => answers.shift() ?? true);
    let calls = 0;
    const { scheduler, sink, registry } = coordinated([{ name: 'tick', cron: '* * * * * *', run: () => void calls++ }], fires);
    assert.equal(await skips(registry, 'tick', 'coordinator-error'), 0, 'the coordinated reasons start at 0');
    scheduler.start();
    await advance(3);
    assert.equal(calls, 1, 'only the third fire ran');
    const skipped = sink.lines.filter((l) => l['outcome'] === 'skipped');
    assert.deepEqual(
      skipped.map((l) => [l.level, l['reason'], l['fire']]),
      [
        [WARN, 'coordinator-error', 'tick:2030-01-01T00:00:01.000Z'],
        [WARN, 'clock-skew', 'tick:2030-01-01T00:00:02.000Z'],
      ],
    );
    assert.equal(await skips(registry, 'tick', 'coordinator-error'), 1);
    assert.equal(await skips(registry, 'tick', 'clock-skew'), 1);
    assert.equal(await runCount(registry, 'tick', 'success'), 1);
    await scheduler.stop(AbortSignal.timeout(1_000));
  });

  it('does not claim a fire while its previous run is still going: another replica may take it', async (t) => {
    const advance = fakeClock(t);
    const { fires, claims } = coordinator(() => true);
    let release = () => {};
    const { scheduler, registry } = coordinated(
      [{ name: 'slow', cron: '* * * * * *', run: () => new Promise<void>((resolve) => (release = resolve)) }],
      fires,
    );
    scheduler.start();
    await advance(3);
    assert.equal(claims.length, 1, 'claimed the first fire only');
    assert.equal(await skips(registry, 'slow', 'overlap'), 2);
    release();
    await scheduler.stop(AbortSignal.timeout(1_000));
  });
});
