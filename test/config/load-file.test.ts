// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ConfigError } from '../../src/config/config-error.ts';
import { MAX_CONFIG_BYTES } from '../../src/config/config-files.ts';
import { loadConfig, loadConfigFile, parseConfigText } from '../../src/config/load-file.ts';
import { availableCpus } from '../../src/utils/cpus.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/config/${name}`, import.meta.url));

/** Loads a fixture expecting a ConfigError; returns it. */
function configError(name: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    loadConfigFile(fixture(name), env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`${name} loaded without error`);
}

test('a valid file with every key loads, with the service resolved against the file', () => {
  const loaded = loadConfigFile(fixture('valid-full.yaml'), {});
  assert.equal(loaded.file, fixture('valid-full.yaml'));
  assert.equal(loaded.servicePath, join(dirname(fixture('valid-full.yaml')), '..', 'service', 'main.ts'));
  assert.equal(loaded.config.service, '../service/main.ts');
  assert.equal(loaded.config.port, 8080);
  assert.equal(loaded.config.docs.version, '2.1.0');
  assert.deepEqual(loaded.config.docs.servers, ['https://books.example.com - production', '/']);
  assert.equal(loaded.config.docs.description, "Manages the library's books.\n");
  assert.equal(loaded.config.cluster.scrapeTimeoutMs, 500);
  assert.deepEqual(
    { ...loaded.config.cluster },
    {
      startupTimeoutMs: 5000,
      backoffInitialMs: 50,
      backoffMaxMs: 2000,
      stableAfterMs: 10000,
      crashLoopFailures: 3,
      crashLoopWindowMs: 30000,
      scrapeTimeoutMs: 500,
      heartbeatIntervalMs: 500,
      heartbeatTimeoutMs: 5000,
      maxMemoryMB: 512,
      maxRequests: 10000,
      maxRequestsJitter: 1000,
      balancing: 'kernel',
      metricsIntervalMs: 2000,
      allowFastRestarts: true,
      scaleDownAfterMs: 30000,
      allowOversubscription: true,
    },
  );
  assert.ok(Object.isFrozen(loaded.config.docs));
});

test('an empty file gives the defaults, without a service path', () => {
  const loaded = loadConfigFile(fixture('empty.yaml'), {});
  assert.equal(loaded.config.port, 3000);
  assert.equal(loaded.config.workers, 'auto');
  assert.equal('servicePath' in loaded, false);
});

test('an unknown key is named with file and line, as the file was given, with the key it misspells', () => {
  const file = relative(process.cwd(), fixture('unknown-key.yaml'));
  assert.throws(
    () => loadConfigFile(file, {}),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems, [{ key: 'prot', path: ['prot'], message: 'unknown key; did you mean port?', file, line: 3 }]);
      assert.match(error.message, new RegExp(`${file.replaceAll('.', '\\.')}:3: prot: unknown key; did you mean port\\?`));
      return true;
    },
  );
});

test('a wrong type is reported on its line', () => {
  const [problem, ...rest] = configError('wrong-type.yaml').problems;
  assert.equal(rest.length, 0);
  assert.equal(problem?.key, 'port');
  assert.equal(problem?.line, 3);
  assert.match(problem?.message ?? '', /integer/);
});

test('a nested unknown key is reported on its own line', () => {
  const error = configError('nested-unknown-key.yaml');
  assert.deepEqual(
    error.problems.map((p) => [p.key, p.line]),
    [['docs.contact.phone', 6]],
  );
  assert.ok(error.message.includes(`${fixture('nested-unknown-key.yaml')}:6: docs.contact.phone: unknown key`));
});

test('a duplicate key is refused on the line of its second occurrence', () => {
  const problems = configError('duplicate-key.yaml').problems;
  assert.deepEqual(
    problems.map((p) => [p.key, p.line]),
    [['docs.title', 5]],
  );
  assert.match(problems[0]?.message ?? '', /duplicate key/);
});

test('a YAML syntax error is reported with its line', () => {
  const problems = configError('syntax-error.yaml').problems;
  assert.ok(problems.length > 0);
  assert.ok(problems.every((p) => p.message.startsWith('YAML syntax error') && p.line !== undefined && p.line >= 4));
});

test('merge keys are refused with a message that says so', () => {
  const problems = configError('merge-key.yaml').problems;
  const merge = problems.find((p) => p.key === 'health.<<');
  assert.equal(merge?.line, 4);
  assert.match(merge?.message ?? '', /merge keys \(<<\) are not supported/);
  assert.equal(problems.filter((p) => p.key === 'health.<<').length, 1, 'not also reported as an unknown key');
  assert.deepEqual(
    problems.filter((p) => p !== merge).map((p) => p.key),
    ['base'],
  );
});

test('an alias bomb fails fast', () => {
  const problems = configError('alias-bomb.yaml').problems;
  assert.ok(problems.some((p) => /aliases expand to too much data/.test(p.message)));
});

test('a few aliases are allowed', () => {
  const { config } = loadConfigFile(fixture('aliases.yaml'), {});
  assert.deepEqual(config.cors.methods, ['GET', 'POST']);
  assert.deepEqual(config.docs.tags, [{ name: 'books' }]);
});

test('custom tags are refused', () => {
  const problems = configError('custom-tag.yaml').problems;
  assert.deepEqual(
    problems.map((p) => [p.key, p.line]),
    [
      ['host', 2],
      ['docs.title', 4],
    ],
  );
  assert.match(problems[0]?.message ?? '', /tag !!js\/function is not allowed/);
  assert.match(problems[1]?.message ?? '', /tag !include is not allowed/);
});

test('environment variables are interpolated, typed only when plain', () => {
  const { config } = loadConfigFile(fixture('env.yaml'), { PORT: '8081', DISABLE_HEALTH: 'true', STAGE: 'prod', HOST: '::' });
  assert.equal(config.port, 8081);
  assert.equal(config.disableHealth, true);
  assert.equal(config.host, '::');
  assert.equal(config.serviceName, 'books');
  assert.equal(config.docs.title, 'Books on prod');
  assert.equal(config.docs.description, 'Set with ${STAGE} in the environment');
  assert.equal(config.docs.version, '2');
});

test('a missing environment variable names the variable, key and line', () => {
  const problems = configError('missing-env.yaml').problems;
  assert.equal(problems.length, 1);
  assert.equal(problems[0]?.key, 'docs.description');
  assert.equal(problems[0]?.line, 4);
  assert.match(problems[0]?.message ?? '', /PUBLIC_URL is not set/);
});

test('every problem of a file is reported at once, in line order', () => {
  const error = configError('multiple-problems.yaml');
  assert.deepEqual(
    error.problems.map((p) => [p.key, p.line]),
    [
      ['port', 2],
      ['env', 3],
      ['docs.servers[0]', 6],
      ['colour', 7],
      ['metrics.path', 9],
      ['workers', 10],
    ],
  );
  assert.equal(error.problems.at(-1)?.message, "must be a positive integer, 'auto', or { min, max }");
  for (const p of error.problems) assert.ok(error.message.includes(`${fixture('multiple-problems.yaml')}:${p.line}: ${p.key}: `));
});

test('the top level must be a mapping', () => {
  const problems = configError('not-a-mapping.yaml').problems;
  assert.deepEqual(
    problems.map((p) => [p.key, p.line]),
    [['', 1]],
  );
});

test('a missing file, a directory and an oversized file are clear errors', async () => {
  assert.throws(() => loadConfigFile(fixture('does-not-exist.yaml')), /does-not-exist\.yaml: .*does not exist/);
  assert.throws(() => loadConfigFile(dirname(fixture('empty.yaml'))), /is a directory/);
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-config-'));
  const big = join(dir, 'big.yaml');
  writeFileSync(big, `# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`);
  assert.throws(
    () => loadConfigFile(big),
    (e: unknown) => e instanceof ConfigError && /larger than/.test(e.message),
  );
  const latin1 = join(dir, 'latin1.yaml');
  writeFileSync(latin1, Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
  assert.throws(() => loadConfigFile(latin1), /not valid UTF-8/);
});

test('multiple documents, unknown aliases and self-containing aliases are refused', () => {
  const problems = (text: string) => {
    try {
      parseConfigText(text, 'x.yaml', {});
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.problems.map((p) => `${p.line}: ${p.key}: ${p.message}`);
    }
    assert.fail('expected a ConfigError');
  };
  assert.match(problems('port: 1\n---\nport: 2\n').join('\n'), /^2: : only one YAML document/);
  assert.match(problems('port: *nope\n').join('\n'), /^1: port: alias \*nope has no anchor/);
  assert.match(problems('docs: &d\n  contact: *d\n').join('\n'), /^2: docs\.contact: alias \*d refers to a node that contains it/);
  assert.match(problems('__proto__: { port: 1 }\n').join('\n'), /^1: __proto__: unknown key/);
});

test('any text is either a config or a ConfigError, never another exception', () => {
  const yamlish = fc.stringMatching(/^[a-z:{}[\]\-&*!|>'"#%@`$ ,.?~<\n\t0-9]*$/);
  const keys = fc.constantFrom('port', 'host', 'docs', 'title', 'servers', 'workers', '<<', '__proto__', 'a', '${X}');
  const nested = fc.dictionary(keys, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }).map((o) => JSON.stringify(o));
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), yamlish, nested), (text) => {
      try {
        const config = parseConfigText(text, 'prop.yaml', { X: 'port' });
        return typeof config.port === 'number';
      } catch (error) {
        return error instanceof ConfigError && error.problems.length > 0 && error.problems.every((p) => p.line !== undefined);
      }
    }),
    { numRuns: 500 },
  );
});

/** The problems of config text as `line: key: message`. */
function located(lines: string[]): string[] {
  try {
    parseConfigText(`${lines.join('\n')}\n`, 'app.yaml', {});
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    for (const p of error.problems) assert.ok(error.message.includes(`app.yaml:${p.line}: ${p.key}: ${p.message}`));
    return error.problems.map((p) => `${p.line}: ${p.key}: ${p.message}`);
  }
  return [];
}

test('the supervision keys are read from the file, and their problems carry file:line', () => {
  const config = parseConfigText(
    'cluster:\n  heartbeatIntervalMs: 250\n  heartbeatTimeoutMs: 0\n  maxMemoryMB: 300\n  balancing: kernel\n',
    'app.yaml',
    {},
  );
  assert.equal(config.cluster.heartbeatIntervalMs, 250);
  assert.equal(config.cluster.heartbeatTimeoutMs, 0);
  assert.equal(config.cluster.maxMemoryMB, 300);
  assert.equal(config.cluster.balancing, 'kernel');
  assert.deepEqual(located(['port: 1', 'cluster:', '  balancing: roundrobin', '  metricsIntervalMs: 10', '  maxMemoryMB: 0.5']), [
    '3: cluster.balancing: must be one of "primary", "kernel"',
    '4: cluster.metricsIntervalMs: must be >= 100',
    '5: cluster.maxMemoryMB: must be integer',
  ]);
});

test('the cross-field rules of the cluster are located on their key', () => {
  assert.deepEqual(located(['cluster:', '  heartbeatIntervalMs: 3000', '  heartbeatTimeoutMs: 3000']), [
    '3: cluster.heartbeatTimeoutMs: must exceed cluster.heartbeatIntervalMs (3000), or be 0 to turn the watchdog off',
  ]);
  assert.match(located(['cluster:', '  heartbeatIntervalMs: 30000'])[0] ?? '', /^2: cluster\.heartbeatIntervalMs: must be less than/);
  assert.match(located(['cluster:', '  maxRequestsJitter: 10'])[0] ?? '', /^2: cluster\.maxRequestsJitter: requires cluster\.maxRequests/);
  const fast = ['cluster:', '  crashLoopFailures: 50', '  backoffInitialMs: 0', '  backoffMaxMs: 0'];
  const [problem, ...rest] = located(fast);
  assert.equal(rest.length, 0);
  assert.match(
    problem ?? '',
    /^4: cluster\.backoffMaxMs: is below 100 while cluster\.crashLoopFailures \(50\) is above 10: .*allowFastRestarts: true/,
  );
  assert.deepEqual(located([...fast, '  allowFastRestarts: true']), []);
});

test('a workers count above 4 × the CPUs available is located on its line', (t) => {
  const cpus = availableCpus();
  if (4 * cpus + 1 > 1024) return t.skip(`${cpus} CPUs: no count in range is too high`);
  const problems = located(['serviceName: books', `workers: ${4 * cpus + 1}`]);
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? '', new RegExp(`^2: workers: is more than 4 × the ${cpus} CPUs? available .*allowOversubscription: true`));
  assert.deepEqual(located([`workers: ${4 * cpus + 1}`, 'cluster:', '  allowOversubscription: true']), []);
});

test('a service module that does not exist, is a directory or cannot be read is a config error on its line', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-service-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'app.yaml');
  const load = (service: string, extra = '') => {
    writeFileSync(file, `serviceName: books\n${extra}service: ${service}\n`);
    try {
      loadConfigFile(file, {});
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error;
    }
    return undefined;
  };

  const missing = load('./nowhere.ts');
  assert.ok(missing);
  assert.deepEqual(missing.problems, [
    { key: 'service', path: ['service'], message: `${join(dir, 'nowhere.ts')} does not exist`, file, line: 2 },
  ]);
  assert.match(missing.message, /app\.yaml:2: service: .*nowhere\.ts does not exist/);

  mkdirSync(join(dir, 'lib'));
  assert.equal(load('./lib')?.problems[0]?.message, `${join(dir, 'lib')} is a directory, not a file`);

  // listed with every other problem of the file, in line order
  const both = load('./nowhere.ts', 'port: eighty\n');
  assert.deepEqual(
    both?.problems.map((p) => [p.line, p.key]),
    [
      [2, 'port'],
      [3, 'service'],
    ],
  );

  writeFileSync(join(dir, 'service.ts'), 'export default () => {};\n');
  assert.equal(load('./service.ts'), undefined);
  assert.equal(loadConfigFile(file, {}).servicePath, join(dir, 'service.ts'));

  if (process.getuid?.() === 0) return t.skip('root reads any file: no unreadable file to test with');
  chmodSync(join(dir, 'service.ts'), 0o000);
  assert.equal(load('./service.ts')?.problems[0]?.message, `${join(dir, 'service.ts')} cannot be read (permission denied)`);
});

test('parseConfigText reads no file: the service is checked by loadConfigFile only', () => {
  assert.equal(parseConfigText('service: ./nowhere.ts\n', 'app.yaml', {}).service, './nowhere.ts');
});

test('loadConfig gives the validated config of a file, as the CLI reads it', (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-load-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.yaml'), 'serviceName: books\nport: 8080\n');
  const config = loadConfig(join(dir, 'app.yaml'));
  t.assert.strictEqual(config.serviceName, 'books');
  t.assert.strictEqual(config.port, 8080);
  t.assert.strictEqual(config.docs.path, '/docs', 'defaults applied');
  writeFileSync(join(dir, 'bad.yaml'), 'serviceName: books\nport: eighty\n');
  t.assert.throws(() => loadConfig(join(dir, 'bad.yaml')), /bad\.yaml:2: port: /);
});

test('loadConfig(file, { env }) reads ${VAR} from env instead of process.env', (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-load-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.yaml'), 'serviceName: ${NAME:-books}\nport: ${PORT}\n');
  const config = loadConfig(join(dir, 'app.yaml'), { env: { PORT: '0' } });
  t.assert.strictEqual(config.port, 0);
  t.assert.strictEqual(config.serviceName, 'books', 'a variable env lacks takes its default, whatever process.env holds');
  t.assert.throws(() => loadConfig(join(dir, 'app.yaml'), { env: {} }), /app\.yaml:2: port: .*PORT/);
});

test('loadConfig(file, { overrides }) merges them over the file before validation', (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-load-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const yaml = [
    'serviceName: books',
    'port: ${PORT}', // unset: the override replaces it, so it is no problem
    'logging:',
    '  level: info',
    '  requests: false',
    'cors:',
    '  origins: [https://a.example, https://b.example]',
    'settings:',
    '  pool: { max: 10, idleMs: 1000 }',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'app.yaml'), yaml);
  const file = join(dir, 'app.yaml');
  const before = JSON.stringify(process.env);

  const config = loadConfig(file, {
    env: {},
    overrides: {
      port: 0,
      logging: { level: 'warn' },
      cors: { origins: ['https://test.example'] },
      settings: { pool: { max: 1 } },
      host: undefined,
    },
  });
  t.assert.strictEqual(config.port, 0);
  t.assert.deepStrictEqual(
    { level: config.logging.level, requests: config.logging.requests },
    { level: 'warn', requests: false },
    'objects merge key by key',
  );
  t.assert.deepStrictEqual(config.cors.origins, ['https://test.example'], 'a list replaces the file’s');
  t.assert.deepStrictEqual(config.settings, { pool: { max: 1, idleMs: 1000 } }, 'at any depth');
  t.assert.strictEqual(config.host, '0.0.0.0', 'an undefined override changes nothing');
  t.assert.strictEqual(JSON.stringify(process.env), before, 'process.env untouched');
  t.assert.strictEqual(loadConfig(file, { env: { PORT: '8080' } }).port, 8080, 'the file alone, again');
});

test("a problem in the overrides is named as theirs; the file's keep file:line; both reported at once", (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-load-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.yaml'), 'serviceName: books\nport: 3000\nlogging:\n  levle: info\n');
  const file = join(dir, 'app.yaml');
  const overrides = { port: 70_000, metrics: { prot: 1 }, ['__proto__']: { polluted: true } } as never;
  let error: unknown;
  try {
    loadConfig(file, { overrides });
  } catch (caught) {
    error = caught;
  }
  t.assert.ok(error instanceof ConfigError);
  const where = error.problems.map((p) => `${p.file === file ? 'file' : p.file}:${p.line ?? '-'} ${p.key}`).sort();
  t.assert.deepStrictEqual(where, ['file:4 logging.levle', 'overrides:- __proto__', 'overrides:- metrics.prot', 'overrides:- port']);
  t.assert.match(error.message, /overrides: port: /);
  t.assert.match(error.message, /app\.yaml:4: logging\.levle: unknown key/);
  t.assert.strictEqual(({} as Record<string, unknown>)['polluted'], undefined, 'no prototype was touched');
});
