import { spawnSync } from 'node:child_process';
import { type TestContext, test } from 'node:test';
import { get, sample, scrapeUntil, startCluster, untilEachAnswered, who } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';

const PROMTOOL = '/usr/bin/promtool';

test('one scrape of the primary sums the workers, adds its own series, and passes promtool', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, metricsPort, workers } = await cluster.ready();

  const pids = await untilEachAnswered(
    workers.values(),
    () => who(appPort),
    (pid) => pid,
    30,
  );
  t.assert.strictEqual(new Set(pids).size, 2, 'the requests were spread over both workers, so the total is a sum');
  const requests = pids.length;

  t.assert.strictEqual((await get(metricsPort, '/metrics')).status, 200);
  // the workers push what they counted within one snapshot interval; the service thread (started once a
  // worker listens, later on a loaded machine) pushes its scheduler's series on its own
  const text = await scrapeUntil(
    metricsPort,
    (body) =>
      sample(body, 'fixture_who_total') === requests &&
      sample(body, 'flotilla_scheduler_runs_total{job="tick",outcome="failure"}') !== undefined,
  );
  t.assert.strictEqual(sample(text, 'http_requests_total{method="GET",route="/who",status="200"}'), requests);
  t.assert.strictEqual(sample(text, 'fixture_who_total'), requests, "the service's own metric, registered in every process, is summed");
  t.assert.strictEqual(sample(text, 'flotilla_workers_up'), 2);
  t.assert.strictEqual(sample(text, 'flotilla_workers_desired'), 2);
  t.assert.strictEqual(sample(text, 'flotilla_scrape_workers_missing'), 0, 'every worker has sent a snapshot');
  t.assert.match(text, new RegExp(`^http_request_duration_seconds_count\\{[^}]*route="/who"[^}]*\\} ${requests}$`, 'm'));
  t.assert.match(text, /^flotilla_primary_process_cpu_user_seconds_total \d/m, "the primary's own process metrics are there");
  t.assert.strictEqual(
    sample(text, 'flotilla_scheduler_runs_total{job="tick",outcome="failure"}'),
    0,
    "the primary's scheduler series are there",
  );
  t.assert.doesNotMatch(text, /^# HELP (\S+) .*\n(?:.*\n)*# HELP \1 /m, 'no metric family appears twice');

  const missing = requireTool('prometheus');
  if (missing !== false) {
    t.skip(missing);
    return;
  }

  // promtool exits 1 when the text does not parse, 3 when it parses but has lint remarks: it must say nothing at all.
  // (prom-client's default gauges `nodejs_active_*_total`, a counter-like suffix on a gauge, are left out for that.)
  t.assert.deepStrictEqual(promtool(text), { status: 0, said: '' }, 'promtool check metrics has nothing to say');
  t.assert.doesNotMatch(text, /nodejs_active_\w+_total/);
});

function promtool(exposition: string): { status: number | null; said: string } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: run.status, said: `${run.stdout}${run.stderr}`.trim() };
}
