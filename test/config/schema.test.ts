import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { CONFIG_SCHEMA } from '../../src/config/schema.ts';
import { adoptResolvedConfig, configProblems, resolveConfig } from '../../src/config/validate.ts';
import { availableCpus } from '../../src/utils/cpus.ts';

// The config's validator skips the meta-schema check at start-up (it is compiled in every process): this is that check.
test('the config schema is a valid JSON Schema', () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, discriminator: true, validateFormats: false });
  assert.equal(ajv.validateSchema(CONFIG_SCHEMA), true, ajv.errorsText(ajv.errors));
});

test('a resolved config resolves to itself, and an adopted one is frozen and not validated again', () => {
  const config = resolveConfig({ port: 0, docs: { title: 'Books' } });
  assert.equal(resolveConfig(config), config);

  // what a worker receives from the primary: the resolved config as JSON
  const copy = adoptResolvedConfig(JSON.parse(JSON.stringify(config)));
  assert.ok(Object.isFrozen(copy) && Object.isFrozen(copy.docs));
  assert.equal(resolveConfig(copy), copy);
  assert.deepEqual(copy, config);

  // a changed copy is a new input, validated as any other
  assert.throws(() => resolveConfig({ ...config, port: -1 }), /port/);
});

/** The problems of a config as `key: message` lines (`cpus` stands for the machine's CPU count). */
const problems = (input: unknown, cpus = 2) => configProblems(input, { cpus }).map((p) => `${p.key}: ${p.message}`);

test('the supervision keys have their defaults; 0 means off for the watchdog, memory and request recycling', () => {
  const { cluster } = resolveConfig({});
  assert.equal(cluster.heartbeatIntervalMs, 1_000);
  assert.equal(cluster.heartbeatTimeoutMs, 10_000);
  assert.equal(cluster.maxMemoryMB, 0);
  assert.equal(cluster.maxRequests, 0);
  assert.equal(cluster.maxRequestsJitter, 0);
  assert.equal(cluster.balancing, 'kernel');
  assert.equal(cluster.metricsIntervalMs, 1_000);
  assert.equal(cluster.allowFastRestarts, false);
  assert.equal(cluster.allowOversubscription, false);
  assert.equal(cluster.scrapeTimeoutMs, 1_000, 'deprecated, still resolved');
});

test('a resolved config, changed and resolved again, is valid: its "off" values pass the schema and the rules', () => {
  const config = resolveConfig({ workers: 2 });
  const again = resolveConfig({ ...config, port: 3001 });
  assert.deepEqual(again.cluster, config.cluster);
});

test('the supervision keys accept their ranges and refuse the rest', () => {
  const valid = {
    heartbeatIntervalMs: 10,
    heartbeatTimeoutMs: 0,
    maxMemoryMB: 1,
    maxRequests: 10_000,
    maxRequestsJitter: 500,
    balancing: 'kernel',
    metricsIntervalMs: 100,
    allowFastRestarts: true,
    allowOversubscription: false,
    scrapeTimeoutMs: 500,
  };
  assert.deepEqual(problems({ cluster: valid }), []);
  assert.equal(resolveConfig({ cluster: { ...valid, maxMemoryMB: 0 } }).cluster.maxMemoryMB, 0, '0 spells "off" too');
  const invalid: [string, unknown, RegExp][] = [
    ['heartbeatIntervalMs', 9, />= 10/],
    ['heartbeatIntervalMs', 'fast', /integer/],
    ['heartbeatTimeoutMs', -1, />= 0/],
    ['maxMemoryMB', 1.5, /integer/],
    ['maxMemoryMB', -1, />= 0/],
    ['maxRequests', -1, />= 0/],
    ['maxRequests', 0.5, /integer/],
    ['maxRequestsJitter', -1, />= 0/],
    ['balancing', 'round-robin', /must be one of "primary", "kernel"/],
    ['metricsIntervalMs', 99, />= 100/],
    ['allowFastRestarts', 'yes', /boolean/],
    ['allowOversubscription', 1, /boolean/],
    ['scrapeTimeoutMs', 0, />= 1/],
  ];
  for (const [key, value, message] of invalid) {
    const found = problems({ cluster: { [key]: value } });
    assert.equal(found.length, 1, `${key}: ${String(value)} → ${found.join('; ')}`);
    assert.match(found[0] ?? '', new RegExp(`^cluster\\.${key}: .*${message.source}`));
  }
});

test('heartbeatTimeoutMs must exceed heartbeatIntervalMs unless it is 0', () => {
  assert.deepEqual(problems({ cluster: { heartbeatIntervalMs: 2_000, heartbeatTimeoutMs: 2_000 } }), [
    'cluster.heartbeatTimeoutMs: must exceed cluster.heartbeatIntervalMs (2000), or be 0 to turn the watchdog off',
  ]);
  assert.deepEqual(problems({ cluster: { heartbeatTimeoutMs: 500 } }), [
    'cluster.heartbeatTimeoutMs: must exceed cluster.heartbeatIntervalMs (1000, the default), or be 0 to turn the watchdog off',
  ]);
  assert.deepEqual(problems({ cluster: { heartbeatIntervalMs: 20_000 } }), [
    'cluster.heartbeatIntervalMs: must be less than cluster.heartbeatTimeoutMs (10000, the default); ' +
      'set cluster.heartbeatTimeoutMs above it, or to 0 to turn the watchdog off',
  ]);
  assert.deepEqual(problems({ cluster: { heartbeatIntervalMs: 20_000, heartbeatTimeoutMs: 0 } }), []);
  assert.deepEqual(problems({ cluster: { heartbeatIntervalMs: 1_000, heartbeatTimeoutMs: 1_001 } }), []);
  assert.deepEqual(problems({ cluster: { heartbeatTimeoutMs: 1_500 } }), []);
});

test('maxRequestsJitter requires maxRequests', () => {
  assert.deepEqual(problems({ cluster: { maxRequestsJitter: 100 } }), [
    'cluster.maxRequestsJitter: requires cluster.maxRequests: the jitter spreads the recycling of workers that served ' +
      'maxRequests requests; set cluster.maxRequests, or remove cluster.maxRequestsJitter',
  ]);
  assert.equal(problems({ cluster: { maxRequests: 0, maxRequestsJitter: 1 } }).length, 1);
  assert.deepEqual(problems({ cluster: { maxRequests: 1_000, maxRequestsJitter: 100 } }), []);
  assert.deepEqual(problems({ cluster: { maxRequestsJitter: 0 } }), [], 'a jitter of 0 is no jitter');
});

test('fast restarts (backoffMaxMs < 100 with crashLoopFailures > 10) are refused unless allowFastRestarts', () => {
  const fast = { backoffInitialMs: 10, backoffMaxMs: 50, crashLoopFailures: 11 };
  const found = problems({ cluster: fast });
  assert.equal(found.length, 1);
  assert.match(found[0] ?? '', /^cluster\.backoffMaxMs: is below 100 while cluster\.crashLoopFailures \(11\) is above 10: /);
  assert.match(found[0] ?? '', /fork crashing workers in a tight loop/);
  assert.match(found[0] ?? '', /set cluster\.allowFastRestarts: true to opt in/);
  assert.deepEqual(problems({ cluster: { ...fast, allowFastRestarts: true } }), []);
  assert.deepEqual(problems({ cluster: { ...fast, crashLoopFailures: 10 } }), []);
  assert.deepEqual(problems({ cluster: { ...fast, backoffMaxMs: 100 } }), []);
  assert.deepEqual(problems({ cluster: { crashLoopFailures: 1000 } }), [], 'the default backoff is slow enough');
});

test('workers: { min, max } scales between two bounds, max a number or auto, never below min', () => {
  assert.deepEqual(resolveConfig({ workers: { min: 1, max: 'auto' } }).workers, { min: 1, max: 'auto' });
  assert.deepEqual(problems({ workers: { min: 2, max: 4 } }, 2), []);
  assert.deepEqual(problems({ workers: { min: 3, max: 2 } }, 2), [
    'workers.max: is below workers.min (3): the range would be empty; raise max or lower min',
  ]);
  assert.ok(problems({ workers: { min: 0, max: 2 } }, 2).includes('workers.min: must be >= 1'));
  assert.ok(problems({ workers: { min: 1 } }, 2).includes("workers: must be a positive integer, 'auto', or { min, max }"));
  assert.equal(resolveConfig({}).cluster.scaleDownAfterMs, 60_000, 'a minute by default');
  assert.deepEqual(problems({ cluster: { scaleDownAfterMs: 999 } }, 2), ['cluster.scaleDownAfterMs: must be >= 1000']);
  assert.equal(resolveConfig({}).workers, 'auto', 'a fixed count stays the default');
});

test('a numeric workers above 4 × the CPUs available is refused unless allowOversubscription', () => {
  assert.deepEqual(problems({ workers: 9 }, 2), [
    "workers: is more than 4 × the 2 CPUs available (cgroup quota included): the workers would only compete for CPU time and memory; lower it or use 'auto', or set cluster.allowOversubscription: true to opt in",
  ]);
  assert.match(problems({ workers: 5 }, 1)[0] ?? '', /^workers: is more than 4 × the 1 CPU available/);
  assert.deepEqual(problems({ workers: 8 }, 2), []);
  assert.deepEqual(problems({ workers: 4 }, 1), []);
  assert.deepEqual(problems({ workers: 'auto' }, 1), []);
  assert.deepEqual(problems({ workers: 64, cluster: { allowOversubscription: true } }, 2), []);
  assert.deepEqual(
    problems({ workers: 2000 }, 2),
    ["workers: must be a positive integer, 'auto', or { min, max }"],
    'out of range: one problem',
  );
  // without a CPU count, this machine's is used
  const cpus = availableCpus();
  assert.deepEqual(configProblems({ workers: Math.min(4 * cpus, 1024) }), []);
  if (4 * cpus + 1 <= 1024) assert.equal(configProblems({ workers: 4 * cpus + 1 }).length, 1);
});

test('coordination: the URL names a backend by its scheme; empty is off; renewals and timeouts must fit in the lease', () => {
  const { coordination } = resolveConfig({});
  assert.deepEqual(coordination, { leaseTtlMs: 15_000, leaseRenewMs: 5_000, maxClockSkewMs: 30_000, timeoutMs: 1_000 });
  for (const url of [
    'redis://redis:6379',
    'rediss://:pw@redis:6380/1',
    'postgres://u:p@db/app',
    'postgresql://db/app?sslmode=require',
    '',
  ]) {
    assert.deepEqual(problems({ coordination: { url } }), [], url);
  }
  for (const url of ['http://redis:6379', 'redis:6379', 'mysql://db/app', 'redis:// spaces']) {
    assert.match(problems({ coordination: { url } }).join('; '), /^coordination\.url: must match pattern/, url);
  }
  assert.deepEqual(problems({ coordination: { leaseTtlMs: 5_000 } }), [
    'coordination.leaseTtlMs: coordination.leaseRenewMs (5000) + 2 × coordination.timeoutMs (1000) must be less than coordination.leaseTtlMs (5000): ' +
      'a holder whose renewal fails must stop its schedulers before the lease expires',
  ]);
  assert.equal(problems({ coordination: { leaseRenewMs: 14_000 } }).length, 1);
  assert.deepEqual(problems({ coordination: { leaseTtlMs: 3_000, leaseRenewMs: 1_000, timeoutMs: 500 } }), []);
  assert.deepEqual(problems({ coordination: { leaseTtlMs: 'soon' } }).length, 1, 'a wrong type is reported once, by the schema');
});

test('rateLimit: max and windowMs required positive integers, onStoreError open or closed, no key in a file', () => {
  assert.deepEqual(configProblems({ rateLimit: { max: 50, windowMs: 60_000 } }), []);
  assert.deepEqual(configProblems({ rateLimit: { max: 1, windowMs: 1, onStoreError: 'closed' } }), []);
  assert.equal(resolveConfig({ rateLimit: { max: 5, windowMs: 1_000 } }).rateLimit?.onStoreError, undefined, 'absent: open, by the App');
  assert.equal(resolveConfig({}).rateLimit, undefined, 'no limit unless given');
  const problems = (rateLimit: unknown) => configProblems({ rateLimit }).map((p) => `${p.key}: ${p.message}`);
  assert.deepEqual(problems({ max: 0, windowMs: 1_000 }), ['rateLimit.max: must be >= 1']);
  assert.deepEqual(problems({ max: 5, windowMs: 0 }), ['rateLimit.windowMs: must be >= 1']);
  assert.deepEqual(problems({ max: 1.5, windowMs: 1_000 }), ['rateLimit.max: must be integer']);
  assert.deepEqual(problems({ windowMs: 1_000 }), ["rateLimit: must have required property 'max'"]);
  assert.deepEqual(problems({ max: 5, windowMs: 1_000, onStoreError: 'maybe' }), [
    'rateLimit.onStoreError: must be one of "open", "closed"',
  ]);
  assert.deepEqual(problems({ max: 5, windowMs: 1_000, key: 'ip' }), ['rateLimit.key: unknown key']);
});
