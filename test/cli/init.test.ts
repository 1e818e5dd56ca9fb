import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { init, packageNameOf, serviceNameOf } from '../../src/cli/init.ts';
import { appYaml, SCRIPTS, SERVICE_TEST_TS, SERVICE_TS, TSCONFIG_JSON } from '../../src/cli/init-templates.ts';
import { loadConfigFile } from '../../src/config/load-file.ts';

const FILES = ['app.yaml', 'src/service.ts', 'test/service.test.ts', 'tsconfig.json'];
const NPM_INIT_TEST = 'echo "Error: no test specified" && exit 1';

/** A fresh project directory named `name`, inside a temporary directory removed after the test. */
function project(t: TestContext, name = 'shop', files: Record<string, string> = {}): string {
  const parent = mkdtempSync(join(tmpdir(), 'flotilla-init-'));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, name);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs init in `directory`; resolves with its exit code and what it printed. */
async function run(directory: string, force = false): Promise<{ code: number; out: string }> {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  const code = await init({ directory, force, out: stream });
  return { code, out };
}

function read(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8');
}

function readPackage(dir: string): Record<string, unknown> & { scripts: Record<string, string> } {
  return JSON.parse(read(dir, 'package.json'));
}

test('writes the service, its test, app.yaml, tsconfig.json and a package.json', async (t: TestContext) => {
  const dir = project(t, 'My Shop (v2)');
  const { code, out } = await run(dir);

  t.assert.strictEqual(code, 0, out);
  t.assert.strictEqual(read(dir, 'src/service.ts'), SERVICE_TS);
  t.assert.strictEqual(read(dir, 'test/service.test.ts'), SERVICE_TEST_TS);
  t.assert.strictEqual(read(dir, 'tsconfig.json'), TSCONFIG_JSON);
  t.assert.strictEqual(read(dir, 'app.yaml'), appYaml('My-Shop-v2'));
  t.assert.deepStrictEqual(readPackage(dir), {
    name: 'my-shop-v2',
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: { ...SCRIPTS },
  });
  for (const file of FILES) t.assert.ok(out.includes(file), `the summary names ${file}`);
  t.assert.match(out, /npm start/);
  t.assert.match(out, /npm test/);

  const loaded = loadConfigFile(join(dir, 'app.yaml'), {});
  t.assert.strictEqual(loaded.config.serviceName, 'My-Shop-v2', 'app.yaml is a valid config');
  t.assert.strictEqual(loaded.config.port, 3000);
  t.assert.strictEqual(loaded.servicePath, join(dir, 'src/service.ts'));
  t.assert.strictEqual(loadConfigFile(join(dir, 'app.yaml'), { PORT: '0', METRICS_PORT: '0' }).config.port, 0, 'PORT overrides');
  t.assert.deepStrictEqual(JSON.parse(TSCONFIG_JSON).compilerOptions.types, ['node']);
});

test('refuses to overwrite a file without --force, and then writes nothing', async (t: TestContext) => {
  const dir = project(t, 'shop', { 'src/service.ts': 'mine\n' });
  const { code, out } = await run(dir);

  t.assert.strictEqual(code, 1);
  t.assert.match(out, /src\/service\.ts/);
  t.assert.match(out, /--force/);
  t.assert.doesNotMatch(out, /app\.yaml/, 'only the files that exist are listed');
  t.assert.strictEqual(read(dir, 'src/service.ts'), 'mine\n');
  for (const file of [...FILES.filter((f) => f !== 'src/service.ts'), 'package.json']) {
    t.assert.throws(() => read(dir, file), { code: 'ENOENT' }, `${file} was not written`);
  }
});

test('--force overwrites the files and replaces the scripts of the same names', async (t: TestContext) => {
  const existing = { name: 'shop', type: 'module', scripts: { start: 'node server.js', lint: 'biome check .' } };
  const files: Record<string, string> = { 'package.json': JSON.stringify(existing) };
  for (const file of FILES) files[file] = 'old\n';
  const dir = project(t, 'shop', files);
  const { code, out } = await run(dir, true);

  t.assert.strictEqual(code, 0, out);
  t.assert.strictEqual(read(dir, 'src/service.ts'), SERVICE_TS);
  t.assert.strictEqual(read(dir, 'test/service.test.ts'), SERVICE_TEST_TS);
  t.assert.strictEqual(read(dir, 'app.yaml'), appYaml('shop'));
  t.assert.strictEqual(read(dir, 'tsconfig.json'), TSCONFIG_JSON);
  t.assert.deepStrictEqual(readPackage(dir).scripts, { ...SCRIPTS, lint: 'biome check .' });
});

test("merges into package.json: keeps every other field, the user's scripts, and its indentation", async (t: TestContext) => {
  const existing = {
    name: '@acme/shop',
    version: '2.1.0',
    type: 'commonjs',
    scripts: { test: NPM_INIT_TEST, dev: 'nodemon server.js', lint: 'biome check .' },
    dependencies: { flotilla: 'file:../flotilla' },
    engines: { node: '>=24' },
  };
  const dir = project(t, 'shop', { 'package.json': JSON.stringify(existing, null, 4) });
  const { code, out } = await run(dir);

  t.assert.strictEqual(code, 0, out);
  const pkg = readPackage(dir);
  t.assert.deepStrictEqual(pkg, {
    ...existing,
    type: 'module',
    scripts: { test: SCRIPTS['test'], dev: 'nodemon server.js', lint: 'biome check .', start: SCRIPTS['start'] },
  });
  t.assert.match(read(dir, 'package.json'), /^\{\n {4}"name"/, 'four spaces, as it was');
  t.assert.match(out, /was "commonjs"/);
  t.assert.match(out, /dev kept/, 'says which script it kept');
});

test('a package.json that is not a JSON object: nothing is written', async (t: TestContext) => {
  for (const text of ['{ "name": ', '[]']) {
    const dir = project(t, 'shop', { 'package.json': text });
    const { code, out } = await run(dir);
    t.assert.strictEqual(code, 1);
    t.assert.match(out, /package\.json/);
    t.assert.strictEqual(read(dir, 'package.json'), text);
    t.assert.throws(() => read(dir, 'app.yaml'), { code: 'ENOENT' });
  }
});

test('names from the directory: a valid serviceName and npm package name', (t: TestContext) => {
  t.assert.strictEqual(serviceNameOf('/x/My Shop (v2)'), 'My-Shop-v2');
  t.assert.strictEqual(serviceNameOf('/x/_private.api'), 'private.api');
  t.assert.strictEqual(serviceNameOf('/x/été'), 't');
  t.assert.strictEqual(serviceNameOf('/x/---'), 'service');
  t.assert.strictEqual(serviceNameOf(`/x/${'a'.repeat(300)}`).length, 128);
  t.assert.strictEqual(packageNameOf('/x/My Shop (v2)'), 'my-shop-v2');
  t.assert.strictEqual(packageNameOf('/x/.hidden'), 'hidden');
  t.assert.strictEqual(packageNameOf('/'), 'service');
});
