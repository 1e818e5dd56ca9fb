import { dirname, resolve } from 'node:path';
import { isRecord } from '../utils/is-record.ts';
import { ConfigError, type ConfigProblem, keyOf } from './config-error.ts';
import {
  type ExtraProblem,
  fileError,
  MAX_CONFIG_BYTES,
  readConfigText,
  resolvedTls,
  serviceFileProblem,
  tlsProblems,
} from './config-files.ts';
import { chooseEnv, type Env, type EnvChoice } from './env-default.ts';
import { configSecretProblems, markSettingsFallbacks } from './fallback-secrets.ts';
import type { FallbackValue, UnsetTolerance } from './interpolate.ts';
import { type ConfigOverrides, givenBy, replacedBy, withOverrides } from './overrides.ts';
import { readYaml } from './read-yaml.ts';
import type { ResolvedConfig } from './types.ts';
import { markUnset } from './unset-settings.ts';
import { adoptResolvedConfig, configProblems, resolveConfig } from './validate.ts';
import { type LocatedProblem, offsetOfPath } from './yaml-paths.ts';

/** A config file, validated, with its defaults applied. */
export interface LoadedConfig {
  /** Absolute path of the file. */
  file: string;
  config: ResolvedConfig;
  /** Absolute path of the service module: `config.service` resolved against the file's directory. */
  servicePath?: string;
  /** With `unsetSettings: 'absent'`: the settings left out because their variables are unset, located. */
  unset?: UnsetSetting[];
  /** The environment chosen (`config.env`), and why: the config's `env`, `NODE_ENV`, or the command's default. */
  env: EnvChoice;
  /**
   * With `secrets: 'report'`: the secrets on development fallbacks a production config refuses,
   * located, when they are its only problems (see fallback-secrets.ts). Empty otherwise.
   */
  secretProblems: ConfigProblem[];
  /** The values that took a non-empty `${VAR:-default}` (the variable unset or empty), `settings` ones included. */
  fallbacks: FallbackValue[];
}

/** A `settings` value left out because it names environment variables that are not set. */
export interface UnsetSetting {
  /** The variables. */
  names: string[];
  /** Its dotted key, e.g. `settings.databaseUrl`. */
  key: string;
  path: (string | number)[];
  /** Its line in the file. */
  line: number;
}

/** How `loadConfigFile` reads a file. */
export interface LoadOptions {
  /**
   * `'absent'`: a `settings` value whose environment variables are unset is left out, and the
   * service's settings schema is not checked for it (`flotilla openapi`, `flotilla config`: they
   * connect to nothing). Such a config must never serve. Default: an unset variable is a problem.
   */
  unsetSettings?: 'absent';
  /** Merged over the file's values before validation: see {@link LoadConfigOptions.overrides}. */
  overrides?: ConfigOverrides | undefined;
  /**
   * The `env` when neither the config's `env` nor `NODE_ENV` (read from the variables given) names
   * one, and what the log line calls it. Default: `development`, a standalone App's default.
   */
  defaultEnv?: { env: Env; from: string };
  /**
   * What a production config does with a secret on a development fallback: `'refuse'` (the default)
   * throws it with the other problems, and marks the config so that the service's setup refuses its
   * `settings` secrets; `'report'` does too, but returns the file's own ones in `secretProblems`
   * when they are the only problems; `'allow'` refuses nothing (`flotilla dev`, `flotilla openapi`).
   */
  secrets?: 'refuse' | 'report' | 'allow';
}

/** `flotilla start`'s default environment, and `flotilla openapi`'s and `flotilla config`'s, which read the file as it does. */
export const START_ENV = { env: 'production', from: "flotilla start's default" } as const satisfies LoadOptions['defaultEnv'];
/** The default environment of a standalone App, of `loadConfig` and of `flotilla dev`. */
const STANDALONE_ENV = { env: 'development', from: "a standalone App's default" } as const;

/**
 * How `loadConfig` reads a file, for tests that build an App from the service's own config.
 *
 * @example
 * loadConfig('app.yaml', { env: { PORT: '0' }, overrides: { logging: { level: 'warn' } } });
 */
export interface LoadConfigOptions {
  /** The variables `${VAR}` and `${VAR:-default}` read, instead of `process.env` (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Values merged over the file's before validation: objects key by key at any depth, anything else
   * (a list, a string, a number) replacing the file's value; a key left `undefined` changes nothing.
   * A value given here replaces the file's `${VAR}` too, so an unset variable under it is no problem.
   * A problem in what they give is reported as `overrides: <key>: …`; the file's keep `file:line`.
   */
  overrides?: ConfigOverrides;
}

/**
 * Reads, parses, interpolates and validates a YAML config file, and checks that
 * its `service` module and its `preload` modules are readable files, and that
 * `tls`'s certificate and key parse and match (their paths resolved against
 * the file's directory in the config returned). Every problem is reported at once in
 * a `ConfigError` whose message names file, line and key, e.g.
 * `config/app.yaml:7: docs.servers[0]: ...` or
 * `config/app.yaml:3: service: /srv/app/service.ts does not exist`.
 *
 * @example
 * const { config, servicePath } = loadConfigFile('config/app.yaml');
 */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): LoadedConfig {
  const absolute = resolve(file);
  // the service module is checked with the rest, so that its problem is listed with every other one
  const servicePathOf = (service: string) => resolve(dirname(absolute), service);
  const lenient: UnsetTolerance | undefined = options.unsetSettings === 'absent' ? { under: 'settings', found: [] } : undefined;
  const text = readConfigText(file);
  const secrets = options.secrets ?? 'refuse';
  const policy: EnvPolicy = { defaultEnv: options.defaultEnv ?? STANDALONE_ENV, nodeEnv: env['NODE_ENV'], secrets };
  const checked = checkConfigText(text, file, env, lenient, options.overrides, policy, (value) => {
    const problems: ExtraProblem[] = [];
    const service = isRecord(value) ? value['service'] : undefined;
    if (typeof service === 'string' && service !== '') {
      const path = servicePathOf(service);
      const problem = serviceFileProblem(path);
      if (problem !== undefined) problems.push({ path: ['service'], message: `${path} ${problem}` });
    }
    const preload = isRecord(value) ? value['preload'] : undefined;
    for (const [i, module] of (Array.isArray(preload) ? preload : []).entries()) {
      if (typeof module !== 'string' || module === '') continue;
      const path = servicePathOf(module);
      const problem = serviceFileProblem(path);
      if (problem !== undefined) problems.push({ path: ['preload', i], message: `${path} ${problem}` });
    }
    problems.push(...tlsProblems(isRecord(value) ? value['tls'] : undefined, servicePathOf));
    return problems;
  });
  let { config } = checked;
  if (config.tls !== undefined) config = adoptResolvedConfig({ ...config, tls: resolvedTls(config.tls, servicePathOf) });
  if (config.i18n !== undefined) {
    config = adoptResolvedConfig({ ...config, i18n: { ...config.i18n, directory: resolve(dirname(absolute), config.i18n.directory) } });
  }
  if (config.preload.length > 0) config = adoptResolvedConfig({ ...config, preload: config.preload.map(servicePathOf) });
  // the service's setup refuses the `settings` secrets on fallbacks of a production config (settings.ts)
  if (secrets !== 'allow' && config.env === 'production') markSettingsFallbacks(config, checked.fallbacks);
  const loaded: LoadedConfig = {
    file: absolute,
    config,
    env: checked.env,
    secretProblems: checked.secretProblems,
    fallbacks: checked.fallbacks,
  };
  if (config.service !== undefined) loaded.servicePath = servicePathOf(config.service);
  if (lenient !== undefined) {
    markUnset(
      config,
      lenient.found.map((u) => u.path),
    );
    const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
    loaded.unset = lenient.found.map((u) => ({ names: u.names, key: keyOf(u.path), path: u.path, line: lineOf(u.offset) }));
  }
  return loaded;
}

/**
 * The validated config of a YAML file, defaults applied, as `flotilla start`
 * reads it: for tests and scripts that build an App from the same file.
 * `env` replaces `process.env` for the file's `${VAR}`s; `overrides` are merged
 * over the file's values before validation (see {@link LoadConfigOptions}), so
 * a test changes what it needs without touching `process.env`.
 * Its `env`, left out, is `NODE_ENV` (from those variables) when that is
 * `development`, `staging` or `production`, else `development`, as a standalone
 * App's. In `production`, a secret on a development fallback is refused as
 * `flotilla start` refuses it (the `settings` ones by the service's setup).
 * Throws a `ConfigError` naming file, line and key of every problem.
 *
 * @example
 * const app = new App(loadConfig('config/app.yaml'));
 * const test = new App(loadConfig('app.yaml', { overrides: { port: 0, logging: { level: 'warn' } } }), { serveMetrics: false });
 */
export function loadConfig(file: string, options: LoadConfigOptions = {}): ResolvedConfig {
  return loadConfigFile(file, options.env ?? process.env, { overrides: options.overrides, secrets: 'refuse' }).config;
}

/**
 * Parses and validates config text; `file` only names the source in problems.
 * Throws `ConfigError` for any invalid text, and nothing else. It reads no
 * file: `service` is checked only by `loadConfigFile`.
 *
 * @example
 * const config = parseConfigText('port: ${PORT:-3000}\n', 'app.yaml', process.env); // config.port === 3000
 */
export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const policy: EnvPolicy = { defaultEnv: STANDALONE_ENV, nodeEnv: env['NODE_ENV'], secrets: 'refuse' };
  return checkConfigText(text, file, env, undefined, undefined, policy, () => []).config;
}

/** How `checkConfigText` chooses the `env` and treats the secrets on fallbacks. */
interface EnvPolicy {
  defaultEnv: { env: Env; from: string };
  nodeEnv: string | undefined;
  secrets: 'refuse' | 'report' | 'allow';
}

/** What `checkConfigText` found. */
interface CheckedText {
  config: ResolvedConfig;
  env: EnvChoice;
  fallbacks: FallbackValue[];
  secretProblems: ConfigProblem[];
}

/**
 * `parseConfigText`, plus `overrides` merged over the parsed value and the problems `extra` finds in
 * it, all located (in the file, or in the overrides) and reported at once.
 */
function checkConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
  lenient: UnsetTolerance | undefined,
  overrides: ConfigOverrides | undefined,
  policy: EnvPolicy,
  extra: (value: unknown) => ExtraProblem[],
): CheckedText {
  if (text.length > MAX_CONFIG_BYTES) throw fileError(file, `is larger than ${MAX_CONFIG_BYTES} bytes`);
  const read = readYaml(text, env, lenient);
  const { doc, lineCounter } = read;
  // a value the overrides replace is not read from the file: its unset variable is no problem
  const problems = read.problems.filter((p) => overrides === undefined || !replacedBy(overrides, p.path));
  let value = overrides === undefined || read.value === undefined ? read.value : withOverrides(read.value, overrides);
  // a value the overrides replace did not take its fallback
  const fallbacks = read.fallbacks.filter((f) => overrides === undefined || !replacedBy(overrides, f.path));
  const given: ConfigProblem[] = [];
  const configEnv = isRecord(value) && typeof value['env'] === 'string' ? (value['env'] as Env) : undefined;
  const chosen = chooseEnv(configEnv, policy.nodeEnv, policy.defaultEnv);
  if (isRecord(value) && value['env'] === undefined) value = { ...value, env: chosen.env };
  const secretProblems: LocatedProblem[] = [];
  if (policy.secrets !== 'allow' && chosen.env === 'production') {
    for (const p of configSecretProblems(fallbacks))
      secretProblems.push({ path: [...p.path], offset: offsetOfPath(doc, p.path), message: p.message });
  }
  if (value === undefined && problems.length === 0) problems.push({ path: [], offset: 0, message: 'is not a usable YAML document' });
  if (value !== undefined) {
    // a key the YAML reading already reported is not reported again by the validation (nor anything under it)
    const covered = new Set(problems.map((p) => pathKey(p.path)));
    for (const p of [...configProblems(value), ...extra(value)]) {
      if (p.path.some((_, i) => covered.has(pathKey(p.path.slice(0, i)))) || covered.has(pathKey(p.path))) continue;
      if (overrides !== undefined && givenBy(overrides, p.path))
        given.push({ key: keyOf(p.path), path: [...p.path], message: p.message, file: 'overrides' });
      else problems.push({ path: [...p.path], offset: offsetOfPath(doc, p.path), message: p.message });
    }
  }
  const line = (p: LocatedProblem) => Math.max(1, lineCounter.linePos(p.offset).line);
  const locate = (p: LocatedProblem): ConfigProblem => ({ key: keyOf(p.path), path: p.path, message: p.message, file, line: line(p) });
  const reported = policy.secrets === 'report' && problems.length === 0 && given.length === 0 ? [] : secretProblems;
  if (problems.length > 0 || given.length > 0 || reported.length > 0) {
    const located = [...problems, ...reported].map(locate);
    throw new ConfigError([...given, ...located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0))]);
  }
  const unreported = reported.length === 0 ? secretProblems.map(locate) : [];
  return { config: resolveConfig(value), env: chosen, fallbacks, secretProblems: unreported };
}

/**
 * Problems found beyond the file's own validation (the service's `settings`,
 * checked against the schema its module declares), located in the config
 * file they came from: a `ConfigError` naming file, line and key of each.
 * Read again, the file may have changed since: a problem whose key is gone
 * points at the nearest parent that is still there.
 *
 * @example
 * locateProblems('config/app.yaml', error.problems).message; // 'invalid configuration:\n  - config/app.yaml:9: settings.pool: must be integer'
 */
export function locateProblems(file: string, problems: readonly ConfigProblem[], env: NodeJS.ProcessEnv = process.env): ConfigError {
  let text: string;
  try {
    text = readConfigText(file);
  } catch {
    return new ConfigError(problems.map((p) => ({ ...p, file })));
  }
  const { doc, lineCounter } = readYaml(text, env);
  const line = (p: ConfigProblem) => Math.max(1, lineCounter.linePos(offsetOfPath(doc, p.path)).line);
  const located = problems.map((p) => ({ ...p, file, line: line(p) }));
  return new ConfigError(located.sort((a, b) => a.line - b.line));
}

function pathKey(path: readonly (string | number)[]): string {
  return JSON.stringify(path);
}
