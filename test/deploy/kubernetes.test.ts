import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { settingsFallbacksOf } from '../../src/config/fallback-secrets.ts';
import { loadConfigFile, START_ENV } from '../../src/config/load-file.ts';

const root = resolve(import.meta.dirname, '../..');
const docs = parseAllDocuments(readFileSync(join(root, 'deploy/kubernetes.yaml'), 'utf8')).map((d) => {
  if (d.errors.length > 0) throw d.errors[0];
  // biome-ignore lint/suspicious/noExplicitAny: a parsed manifest is walked by key
  return d.toJS() as Record<string, any>;
});
const deployment = docs.find((d) => d['kind'] === 'Deployment')!;
const service = docs.find((d) => d['kind'] === 'Service')!;
const pod = deployment['spec']['template'];
const container = pod['spec']['containers'][0];
const { config } = loadConfigFile(join(root, 'config/app.yaml'), {});
const portNamed = (name: string) => container['ports'].find((p: { name: string }) => p.name === name)?.containerPort;

test('the manifest has a Deployment and a Service that selects its pods', () => {
  assert.ok(deployment && service);
  assert.deepEqual(service['spec']['selector'], deployment['spec']['selector']['matchLabels']);
  assert.equal(service['spec']['ports'][0]['targetPort'], 'http');
});

test('ports and probes match the config', () => {
  assert.equal(portNamed('http'), config.port);
  assert.equal(portNamed('metrics'), config.metrics.port);
  for (const probe of ['readinessProbe', 'startupProbe']) {
    assert.equal(container[probe]['httpGet']['path'], '/health', probe);
    assert.equal(container[probe]['httpGet']['port'], 'http', probe);
  }
  assert.equal(container['livenessProbe']['tcpSocket']['port'], 'http', 'liveness does not depend on health checkers');
});

test('the grace period covers the preStop delay plus the shutdown budget', () => {
  const [cmd, seconds] = container['lifecycle']['preStop']['exec']['command'] as string[];
  assert.equal(cmd, 'sleep');
  const grace = pod['spec']['terminationGracePeriodSeconds'] as number;
  assert.ok(grace > Number(seconds) + config.shutdown.timeoutMs / 1000, `${grace}s > ${seconds}s + ${config.shutdown.timeoutMs / 1000}s`);
});

test('the CPU limit is a whole number of CPUs, consistent with workers: auto', () => {
  assert.equal(config.workers, 'auto');
  const cpu = String(container['resources']['limits']['cpu']);
  assert.match(cpu, /^\d+$/, 'a whole CPU count: auto rounds a fractional quota down');
  assert.equal(container['resources']['requests']['cpu'], cpu);
});

test('Prometheus scrape annotations point at the metrics port and path', () => {
  const a = pod['metadata']['annotations'];
  assert.equal(a['prometheus.io/scrape'], 'true');
  assert.equal(Number(a['prometheus.io/port']), config.metrics.port);
  assert.equal(a['prometheus.io/path'], config.metrics.path);
});

test('three replicas share their schedulers: coordination.url comes from a Secret', () => {
  assert.equal(deployment['spec']['replicas'], 3);
  const variable = container['env'].find((e: { name: string }) => e.name === 'COORDINATION_URL');
  assert.deepEqual(variable?.valueFrom, { secretKeyRef: { name: 'books-coordination', key: 'url' } });
  const url = 'redis://:s3cret@redis:6379';
  const { config: withSecret } = loadConfigFile(join(root, 'config/app.yaml'), { COORDINATION_URL: url });
  assert.equal(withSecret.coordination.url, url, 'config/app.yaml reads it');
  assert.equal(config.coordination.url, undefined, 'unset or empty (npm start): none');
});

test('the books live in PostgreSQL: settings.databaseUrl comes from a Secret, unset for npm start', () => {
  const variable = container['env'].find((e: { name: string }) => e.name === 'DATABASE_URL');
  assert.deepEqual(variable?.valueFrom, { secretKeyRef: { name: 'books-database', key: 'url' } });
  const url = 'postgres://books:s3cret@postgres:5432/books';
  const { config: withSecret } = loadConfigFile(join(root, 'config/app.yaml'), { DATABASE_URL: url });
  assert.equal((withSecret.settings as { databaseUrl: string }).databaseUrl, url, 'config/app.yaml reads it');
  assert.equal((config.settings as { databaseUrl: string }).databaseUrl, '', 'unset (npm start): the embedded SQLite database');
});

test('the secrets of the example come from a Secret: without them, production refuses their development fallbacks', () => {
  const env = container['env'] as { name: string; value?: string; valueFrom?: unknown }[];
  assert.equal(env.find((e) => e.name === 'NODE_ENV')?.value, 'production');
  const given: Record<string, string> = {};
  for (const [name, key] of [
    ['COOKIE_SECRET', 'cookie-secret'],
    ['BOOKS_API_KEY', 'api-key'],
    ['BOOKS_READER_PASSWORD', 'reader-password'],
  ] as const) {
    assert.deepEqual(env.find((e) => e.name === name)?.valueFrom, { secretKeyRef: { name: 'books-secrets', key } }, name);
    given[name] = `${name.toLowerCase()}-from-the-secret-32-characters`;
  }
  const file = join(root, 'config/app.yaml');
  const production = { defaultEnv: START_ENV, secrets: 'report' } as const;
  const refused = loadConfigFile(file, { NODE_ENV: 'production' }, production);
  assert.deepEqual(
    refused.secretProblems.map((p) => p.key),
    ['cookies.secrets[0]'],
  );
  assert.deepEqual(
    settingsFallbacksOf(refused.config).map((f) => f.path.join('.')),
    ['settings.databaseFile', 'settings.apiKey', 'settings.readerPassword'],
  );
  const withSecrets = loadConfigFile(file, { NODE_ENV: 'production', ...given }, production);
  assert.deepEqual(withSecrets.secretProblems, []);
  assert.deepEqual(
    settingsFallbacksOf(withSecrets.config).map((f) => f.path.join('.')),
    ['settings.databaseFile'],
  );
});
