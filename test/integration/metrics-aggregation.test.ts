import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { get, sample, startCluster, who } from '../helpers/cluster.ts';

const PROMTOOL = '/usr/bin/promtool';
const REQUESTS = 30;

test('one scrape of the primary sums the workers, adds its own series, and passes promtool', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, metricsPort } = await cluster.ready();

  const pids = new Set<number>();
  for (let i = 0; i < REQUESTS; i++) pids.add(await who(appPort));
  t.assert.strictEqual(pids.size, 2, 'the requests were spread over both workers, so the total is a sum');

  const scrape = await get(metricsPort, '/metrics');
  t.assert.strictEqual(scrape.status, 200);
  const text = scrape.body;
  t.assert.strictEqual(sample(text, 'http_requests_total{method="GET",route="/who",status="200"}'), REQUESTS);
  t.assert.strictEqual(sample(text, 'fixture_who_total'), REQUESTS, "the service's own metric, registered in every process, is summed");
  t.assert.strictEqual(sample(text, 'flotilla_workers_up'), 2);
  t.assert.strictEqual(sample(text, 'flotilla_workers_desired'), 2);
  t.assert.strictEqual(sample(text, 'flotilla_scrape_workers_missing'), 0, 'every worker answered the scrape');
  t.assert.match(text, /^http_request_duration_seconds_count\{[^}]*route="\/who"[^}]*\} 30$/m);
  t.assert.match(text, /^flotilla_primary_process_cpu_user_seconds_total \d/m, "the primary's own process metrics are there");
  t.assert.strictEqual(
    sample(text, 'flotilla_scheduler_runs_total{job="tick",outcome="failure"}'),
    0,
    "the primary's scheduler series are there",
  );
  t.assert.doesNotMatch(text, /^# HELP (\S+) .*\n(?:.*\n)*# HELP \1 /m, 'no metric family appears twice');

  const installed = existsSync(PROMTOOL);
  if (!installed && process.env['CI'] === undefined) {
    t.skip(`${PROMTOOL} is missing (Debian package "prometheus"); CI installs it`);
    return;
  }
  t.assert.ok(installed, `${PROMTOOL} is required in CI: install the Debian package "prometheus"`);

  // promtool exits 1 when the text does not parse, 3 when it parses but has lint remarks. The only remarks
  // allowed are about prom-client's default gauges `nodejs_active_*_total` (a counter-like suffix on a gauge;
  // their names are prom-client's, and dashboards rely on them): with those families left out, it must be clean.
  const full = promtool(text);
  t.assert.ok(full.status === 0 || full.status === 3, `promtool check metrics cannot parse the exposition:\n${full.said}`);
  const remarks = full.said === '' ? [] : full.said.split('\n');
  const unexpected = remarks.filter((r) => !PROM_CLIENT_REMARK.test(r));
  t.assert.deepStrictEqual(unexpected, [], `promtool check metrics has remarks about flotilla's own series:\n${full.said}`);
  const ours = promtool(withoutFamilies(text, PROM_CLIENT_MISNAMED));
  t.assert.deepStrictEqual(ours, { status: 0, said: '' }, 'without the prom-client defaults, promtool has nothing to say');
});

const PROM_CLIENT_MISNAMED = /^(flotilla_primary_)?nodejs_active_(handles|requests|resources)_total$/;
const PROM_CLIENT_REMARK =
  /^(flotilla_primary_)?nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;

function promtool(exposition: string): { status: number | null; said: string } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: run.status, said: `${run.stdout}${run.stderr}`.trim() };
}

/** The exposition without the families whose name matches (their HELP, TYPE and samples). */
function withoutFamilies(exposition: string, names: RegExp): string {
  return exposition
    .split('\n')
    .filter((line) => {
      const name = line.startsWith('# ') ? line.split(' ')[2] : line.split(/[{ ]/, 1)[0];
      return name === undefined || !names.test(name);
    })
    .join('\n');
}
