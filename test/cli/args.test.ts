import { describe, type TestContext, test } from 'node:test';
import { COMMANDS, DEFAULT_CONFIGS, parseCli, USAGE } from '../../src/cli/args.ts';

describe('parseCli', () => {
  test('each command, without a config file until one is named (the CLI then looks for one)', (t: TestContext) => {
    for (const command of COMMANDS) t.assert.deepStrictEqual(parseCli([command]), { command, config: undefined, force: false });
    t.assert.deepStrictEqual(DEFAULT_CONFIGS, ['app.yaml', 'config/app.yaml']);
  });

  test('--config in every spelling, before or after the command', (t: TestContext) => {
    const expected = { command: 'start', config: 'deploy/app.yaml', force: false };
    t.assert.deepStrictEqual(parseCli(['start', '--config', 'deploy/app.yaml']), expected);
    t.assert.deepStrictEqual(parseCli(['start', '--config=deploy/app.yaml']), expected);
    t.assert.deepStrictEqual(parseCli(['start', '-c', 'deploy/app.yaml']), expected);
    t.assert.deepStrictEqual(parseCli(['--config', 'deploy/app.yaml', 'start']), expected);
  });

  test('--help and --version win over anything else', (t: TestContext) => {
    t.assert.strictEqual(parseCli(['--help']).command, 'help');
    t.assert.strictEqual(parseCli(['start', '-h']).command, 'help');
    t.assert.strictEqual(parseCli(['--version']).command, 'version');
    t.assert.strictEqual(parseCli(['-v', 'openapi']).command, 'version');
    t.assert.strictEqual(parseCli(['-h']).command, 'help', 'help needs no command');
  });

  test('rejects what it does not know with a TypeError that says what', (t: TestContext) => {
    t.assert.throws(() => parseCli([]), { name: 'TypeError', message: 'a command is required' });
    t.assert.throws(() => parseCli(['serve']), { name: 'TypeError', message: "unknown command 'serve'" });
    t.assert.throws(() => parseCli(['start', 'now']), { name: 'TypeError', message: "unexpected argument 'now'" });
    t.assert.throws(() => parseCli(['start', '--port', '80']), { name: 'TypeError', message: /--port/ });
    t.assert.throws(() => parseCli(['start', '--config']), { name: 'TypeError', message: /--config/ });
    t.assert.throws(() => parseCli(['start', '--help=yes']), TypeError);
  });

  test('--force belongs to init', (t: TestContext) => {
    t.assert.deepStrictEqual(parseCli(['init', '--force']), { command: 'init', config: undefined, force: true });
    t.assert.strictEqual(parseCli(['-f', 'init']).force, true);
    t.assert.throws(() => parseCli(['start', '--force']), { name: 'TypeError', message: '--force applies to init only' });
  });

  test('the usage names every command and option', (t: TestContext) => {
    for (const word of [...COMMANDS, '--config', '--force', '--help', '--version', ...DEFAULT_CONFIGS])
      t.assert.ok(USAGE.includes(word), word);
  });
});
