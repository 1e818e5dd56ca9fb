import { type ConfigProblem, keyOf } from './config-error.ts';
import type { Fallback, FallbackValue } from './interpolate.ts';
import type { KeyPath } from './unset-settings.ts';

/**
 * Development secrets refused in production. A config file may give a secret a development value,
 * `${COOKIE_SECRET:-development-only-…}`, so that the service runs on a fresh clone; in production
 * that value is public (it is in the repository and the image), so a secret that took such a
 * non-empty fallback (its variable unset or empty) stops the start. An empty fallback,
 * `${DATABASE_URL:-}`, means "not configured": the feature it feeds is off, and nothing is refused.
 *
 * The secrets are `cookies.secrets`, the password in `coordination.url` (its user info, or a
 * `password=` in its query), and the `settings` keys whose schema says `secret: true` or
 * `writeOnly: true`. The first two are checked when the file is read (load-file.ts); the settings
 * where the service's schema is known, with the rest of the settings (settings.ts), in each
 * process that runs the service's setup: the config carries the fallbacks of its `settings` there
 * (`settingsFallbacksOf`).
 */

/**
 * The problems of the secrets of the file's own keys (`cookies.secrets`, `coordination.url`'s
 * password) that took a non-empty fallback; unlocated (the caller knows the lines).
 *
 * @example
 * configSecretProblems(readYaml(text, {}).fallbacks);
 * // [{ key: 'cookies.secrets[0]', message: 'in production this secret must come from COOKIE_SECRET, which is unset; …' }]
 */
export function configSecretProblems(fallbacks: readonly FallbackValue[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const value of fallbacks) {
    const { path } = value;
    if (path[0] === 'cookies' && path[1] === 'secrets') problems.push(problem(path, 'this secret', value.fallbacks));
    else if (path.length === 2 && path[0] === 'coordination' && path[1] === 'url') {
      const spans = passwordSpans(value.value);
      const inPassword = value.fallbacks.filter((f) => spans.some(([start, end]) => f.start < end && f.end > start));
      if (inPassword.length > 0) problems.push(problem(path, 'the password in this URL', inPassword));
    }
  }
  return problems;
}

/**
 * The problems of the settings at `secrets` (the paths the service's schema marks secret, see
 * `secretPaths` in settings.ts) whose value, or a value below them, took a non-empty fallback.
 *
 * @example
 * settingsSecretProblems([['settings', 'apiKey']], settingsFallbacksOf(config));
 */
export function settingsSecretProblems(secrets: readonly KeyPath[], fallbacks: readonly FallbackValue[]): ConfigProblem[] {
  const under = (path: KeyPath, parent: KeyPath) => parent.length <= path.length && parent.every((s, i) => path[i] === s);
  return fallbacks.filter((f) => secrets.some((s) => under(f.path, s))).map((f) => problem(f.path, 'this secret', f.fallbacks));
}

const settingsFallbacks = new WeakMap<object, readonly FallbackValue[]>();

/**
 * Records, on a config to be run in production, the `settings` values that took non-empty fallbacks:
 * the service's setup refuses those its schema marks secret (`checkSettings`). A config without them
 * (read in development, or built in code) refuses nothing.
 */
export function markSettingsFallbacks(config: object, fallbacks: readonly FallbackValue[]): void {
  const ofSettings = fallbacks.filter((f) => f.path[0] === 'settings');
  if (ofSettings.length > 0) settingsFallbacks.set(config, ofSettings);
}

/**
 * The `settings` values of `config` that took non-empty fallbacks and must not be secrets
 * (see `markSettingsFallbacks`); empty for a config that refuses nothing.
 *
 * @example
 * settingsFallbacksOf(loadConfig('app.yaml', { env: { NODE_ENV: 'production' } })); // [{ path: ['settings', 'apiKey'], … }]
 */
export function settingsFallbacksOf(config: object): readonly FallbackValue[] {
  return settingsFallbacks.get(config) ?? [];
}

/** `in production this secret must come from COOKIE_SECRET, which is unset; the fallback is for development`. */
function problem(path: KeyPath, what: string, fallbacks: readonly Fallback[]): ConfigProblem {
  const names = [...new Map(fallbacks.map((f) => [f.name, f])).values()];
  const which = names.map((f) => f.name);
  const listed = which.length === 1 ? which[0] : `${which.slice(0, -1).join(', ')} and ${which.at(-1)}`;
  const state = names.every((f) => f.variable === 'unset')
    ? 'unset'
    : names.every((f) => f.variable === 'empty')
      ? 'empty'
      : 'unset or empty';
  const is = which.length === 1 ? 'is' : 'are';
  return {
    key: keyOf(path),
    path: [...path],
    message: `in production ${what} must come from ${listed}, which ${is} ${state}; the fallback is for development`,
  };
}

/**
 * Where a URL's passwords are in its text: the password of its user info (`redis://:pw@host`,
 * `postgres://user:pw@host`) and a `password=` (or `passwd`, `pass`, `pwd`) in its query, as
 * libpq reads it. Pairs of start and end (exclusive); none when it has no password.
 */
export function passwordSpans(url: string): [number, number][] {
  const spans: [number, number][] = [];
  const scheme = url.indexOf('://');
  if (scheme === -1) return spans;
  const authorityStart = scheme + 3;
  const rest = url.slice(authorityStart);
  const authorityEnd = authorityStart + (rest.search(/[/?#]/) === -1 ? rest.length : rest.search(/[/?#]/));
  const at = url.lastIndexOf('@', authorityEnd - 1);
  if (at >= authorityStart) {
    const colon = url.indexOf(':', authorityStart);
    if (colon !== -1 && colon < at && colon + 1 < at) spans.push([colon + 1, at]);
  }
  const query = url.indexOf('?', authorityEnd);
  if (query !== -1) {
    const pattern = /[?&](?:password|passwd|pass|pwd)=([^&#]*)/gi;
    pattern.lastIndex = query;
    for (let m = pattern.exec(url); m !== null; m = pattern.exec(url)) {
      const end = m.index + m[0].length;
      if (m[1] !== '') spans.push([end - (m[1] ?? '').length, end]);
    }
  }
  return spans;
}
