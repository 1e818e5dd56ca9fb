import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { CLI, clusterYaml, tempFiles } from '../helpers/cluster.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `text` as a literal inside a regular expression. */
function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

async function flotilla(...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 10_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test('start on a broken file exits 2 naming the file, the line and the key of every problem', async (t: TestContext) => {
  const dir = tempFiles(t, {
    'broken.yaml': [
      'serviceName: fixture',
      'host: 127.0.0.1',
      'colour: blue',
      'workers: 2',
      'port: eighty',
      'service: ./service.ts',
      '',
    ].join('\n'),
  });
  const file = join(dir, 'broken.yaml');
  const run = await flotilla('start', '--config', file);

  t.assert.strictEqual(run.code, 2, run.stderr);
  t.assert.match(run.stderr, new RegExp(`${literally(file)}:3: colour: unknown key`));
  t.assert.match(run.stderr, new RegExp(`${literally(file)}:5: port: .*integer`));
  t.assert.strictEqual(run.stdout, '', 'nothing started');
});

test('start on a missing file exits 2 and says so', async (t: TestContext) => {
  const file = join(tempFiles(t, {}), 'nowhere.yaml');
  const run = await flotilla('start', '--config', file);
  t.assert.strictEqual(run.code, 2);
  t.assert.match(run.stderr, new RegExp(`${literally(file)}.*does not exist`));
});

test('config prints the effective config as JSON, defaults applied and secrets redacted', async (t: TestContext) => {
  const yaml = clusterYaml({
    docs: { servers: ['https://admin:hunter2@api.example.com - production'] },
    coordination: { url: 'redis://:hunter2@redis.internal:6379' },
    cookies: { secrets: ['hunter2-the-current-cookie-secret-xx', 'hunter2-the-previous-cookie-secret-x'] },
  });
  const file = join(tempFiles(t, { 'app.yaml': yaml }), 'app.yaml');
  const run = await flotilla('config', '--config', file);

  t.assert.strictEqual(run.code, 0, run.stderr);
  t.assert.doesNotMatch(run.stdout, /hunter2/);
  const config = JSON.parse(run.stdout) as Record<string, Record<string, unknown>>;
  t.assert.deepStrictEqual(config['docs']?.['servers'], ['https://[redacted]@api.example.com - production']);
  t.assert.strictEqual(config['coordination']?.['url'], 'redis://[redacted]@redis.internal:6379');
  t.assert.deepStrictEqual(config['cookies']?.['secrets'], ['[redacted]', '[redacted]'], 'each secret, the count kept');
  t.assert.strictEqual(config['coordination']?.['leaseTtlMs'], 15_000);
  t.assert.strictEqual(config['workers'], 2);
  t.assert.strictEqual(config['shutdown']?.['timeoutMs'], 10_000, 'defaults are filled in');
  t.assert.strictEqual(config['metrics']?.['path'], '/metrics');
  t.assert.strictEqual(config['docs']?.['title'], 'fixture', 'the docs title shown is the one the document gets: the service name');
});

test('openapi prints a valid OpenAPI document of the service without listening', async (t: TestContext) => {
  const file = join(tempFiles(t, { 'app.yaml': clusterYaml() }), 'app.yaml');
  const run = await flotilla('openapi', '--config', file);

  t.assert.strictEqual(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout) as { openapi: string; info: { title: string }; paths: Record<string, { get?: unknown }> };
  t.assert.match(document.openapi, /^3\./);
  t.assert.strictEqual(document.info.title, 'fixture');
  t.assert.ok(document.paths['/who']?.get !== undefined, 'GET /who is documented');
  await SwaggerParser.validate(structuredClone(document) as never);
  t.assert.doesNotMatch(run.stderr, /listening/, 'no server was started');
  t.assert.strictEqual(run.stderr, '', 'no log line below warn on stderr');
});
