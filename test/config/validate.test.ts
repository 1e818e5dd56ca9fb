import { execFileSync } from 'node:child_process';
import { type TestContext, test } from 'node:test';
import { resolveConfig } from '../../src/config/validate.ts';

/**
 * Runs `body` in a fresh Node process (sources, as `--conditions=source`), after a hook that records
 * every module it loads; prints whether the config's generated validator was among them.
 */
function loadsValidator(body: string, env: Record<string, string> = {}): boolean {
  const script = [
    "import { registerHooks } from 'node:module';",
    'const loaded = [];',
    'registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });',
    body,
    "process.stdout.write(String(loaded.some((url) => url.includes('config-validator'))));",
  ].join('\n');
  const out = execFileSync(process.execPath, ['--conditions=source', '--input-type=module', '-e', script], {
    cwd: new URL('../../', import.meta.url),
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return out.trim().endsWith('true');
}

test("a worker's App, on the config its primary validated, never loads the config's validator", (t: TestContext) => {
  const config = JSON.stringify(resolveConfig({ serviceName: 'lazy', logging: { level: 'error' } }));
  const body = [
    "const { adoptResolvedConfig } = await import('./src/config/validate.ts');",
    "const { App } = await import('./src/app/index.ts');",
    'const app = new App(adoptResolvedConfig(JSON.parse(process.env.ADOPTED)), { handleSignals: false, serveMetrics: false });',
    'await app.close();',
  ].join('\n');
  t.assert.strictEqual(loadsValidator(body, { ADOPTED: config }), false);
});

test('the first validation loads it, synchronously, and it reports as before', (t: TestContext) => {
  const body = [
    "const { configProblems } = await import('./src/config/validate.ts');",
    "const problems = configProblems({ serviceName: 'x', wokers: 2 });",
    "if (!problems.some((p) => p.key === 'wokers')) throw new Error(JSON.stringify(problems));",
  ].join('\n');
  t.assert.strictEqual(loadsValidator(body), true);
});
