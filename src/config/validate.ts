import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { entryPoint } from '../entry-points.ts';
import { availableCpus } from '../utils/cpus.ts';
import { closestKey } from './closest-key.ts';
import { ConfigError, type ConfigProblem, keyOf } from './config-error.ts';
import { DEFAULTS } from './defaults.ts';
import { envFromNodeEnv } from './env-default.ts';
import { CONFIG_SCHEMA, MAX_WORKERS } from './schema.ts';
import { requirementProblems } from './security-requirements.ts';
import { SECURITY_SCHEME_TYPES } from './security-schema.ts';
import type { KConfig, ResolvedConfig } from './types.ts';

let checkConfig: ValidateFunction | undefined;

/**
 * The schema's validator, generated ahead of time by tools/validators.ts (a
 * test keeps it in step with schema.ts): compiling it cost tens of milliseconds
 * of the primary's start-up, before any worker could be forked. The schema is
 * ours and fixed: a test checks it against the JSON Schema meta-schema, and
 * ajv's strict mode refused unknown keywords when the code was generated.
 * Its code (some 380 kB) is required at the first validation, synchronously:
 * a worker adopts the config its primary validated and never loads it.
 */
function configValidator(): ValidateFunction {
  checkConfig ??= (createRequire(import.meta.url)(fileURLToPath(entryPoint('config/config-validator'))) as { default: ValidateFunction })
    .default;
  return checkConfig;
}

/** Configs `resolveConfig` returned (or that were adopted as such): resolving one again returns it as is. */
const resolved = new WeakSet<object>();

/**
 * Validates a configuration, reports every problem at once, applies the
 * defaults (`env`'s is `NODE_ENV` when that is `development`, `staging` or
 * `production`; an empty `coordination.url` is none) and returns a deeply frozen config. A config it returned before is
 * returned as is.
 *
 * @example
 * const config = resolveConfig({ port: 0 }); // config.docs.path === '/docs'
 */
export function resolveConfig(input: unknown = {}): ResolvedConfig {
  if (typeof input === 'object' && input !== null && resolved.has(input)) return input as ResolvedConfig;
  const problems = configProblems(input);
  if (problems.length > 0) throw new ConfigError(problems);
  const given = input as KConfig;
  // `env` left out follows NODE_ENV when it names one of the three (env-default.ts)
  const env = given.env ?? envFromNodeEnv();
  const merged = merge(DEFAULTS, env === undefined ? given : { ...given, env }) as ResolvedConfig;
  // an empty `coordination.url` (`${COORDINATION_URL:-}` with the variable unset) is no coordinator: absent, for
  // every reader of the resolved config (the primary, the workers, the service thread, the stores, the topics)
  const config = merged.coordination.url === '' ? { ...merged, coordination: withoutUrl(merged.coordination) } : merged;
  // the docs title is the service's name unless one is given: `flotilla config` shows what the docs show
  if ((input as KConfig).docs?.title !== undefined) return adoptResolvedConfig(config);
  return adoptResolvedConfig({ ...config, docs: { ...config.docs, title: config.serviceName } });
}

function withoutUrl(coordination: ResolvedConfig['coordination']): ResolvedConfig['coordination'] {
  const { url: _empty, ...rest } = coordination;
  return rest;
}

/**
 * Takes a config that `resolveConfig` produced, possibly in another process
 * (a worker receives the primary's), deeply frozen, so that resolving it again
 * costs nothing. It is trusted, not validated.
 *
 * @example
 * const app = new App(adoptResolvedConfig(start.config), { role: 'worker' }); // no second validation
 */
export function adoptResolvedConfig(config: ResolvedConfig): ResolvedConfig {
  const frozen = deepFreeze(config);
  resolved.add(frozen);
  return frozen;
}

/** What the validation takes from the machine it runs on; the defaults are this machine's. */
export interface ValidationHost {
  /** CPUs available to the process. Default `availableCpus()` (the cgroup CPU quota included), read only when needed. */
  cpus?: number;
}

/** A numeric `workers` above this many times the CPUs available is refused unless `cluster.allowOversubscription`. */
export const MAX_WORKERS_PER_CPU = 4;
/** `cluster.backoffMaxMs` below this, together with ... */
export const FAST_RESTART_BACKOFF_MS = 100;
/** ... `cluster.crashLoopFailures` above this, is refused unless `cluster.allowFastRestarts`. */
export const FAST_RESTART_FAILURES = 10;

/**
 * Every problem of a configuration (schema and cross-field rules); empty when valid.
 *
 * @example
 * configProblems({ workers: 64 }, { cpus: 2 }); // [{ key: 'workers', message: 'is more than 4 × the 2 CPUs available …' }]
 */
export function configProblems(input: unknown, host: ValidationHost = {}): ConfigProblem[] {
  const problems = schemaProblems(configValidator(), input, [], undefined, CONFIG_SCHEMA);
  // a key the schema refused gets no cross-field problem too
  const refused = new Set(problems.map((p) => p.key));
  try {
    problems.push(...semanticProblems(input as KConfig, host).filter((p) => !refused.has(p.key)));
  } catch {
    // a value of the wrong type; the schema has already reported it
  }
  return problems;
}

function semanticProblems(c: KConfig, host: ValidationHost): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: (string | number)[], message: string) => problems.push({ key: keyOf(path), path, message });
  if (c.cors?.credentials === true && c.cors.origins?.includes('*')) {
    add(['cors', 'origins'], "'*' cannot be combined with credentials: true; list the allowed origins");
  }
  for (const [i, entry] of (c.docs?.servers ?? []).entries()) {
    if (typeof entry !== 'string') continue;
    const url = entry.split(' - ', 1)[0] ?? '';
    if (!isServerUrl(url))
      add(['docs', 'servers', i], `'${url}' is not an absolute http(s) URL or a path; expected "<url> - <description>"`);
  }
  if (c.docs?.path === '/') add(['docs', 'path'], 'must not be the root path');
  problems.push(...docsSecurityProblems(c));
  if (c.docs?.path?.endsWith('/') && c.docs.path !== '/') add(['docs', 'path'], 'must not end with a slash');
  const cl = c.cluster;
  if (cl?.backoffInitialMs !== undefined && cl.backoffMaxMs !== undefined && cl.backoffInitialMs > cl.backoffMaxMs) {
    add(['cluster', 'backoffInitialMs'], 'must not exceed cluster.backoffMaxMs');
  }
  // left out, shedAfterMs follows a delayTargetMs below its default (see src/app/overload/admission.ts)
  const delayTargetMs = c.overload?.delayTargetMs ?? DEFAULTS.overload.delayTargetMs;
  if ((c.overload?.shedAfterMs ?? 0) > delayTargetMs)
    add(['overload', 'shedAfterMs'], `must not exceed overload.delayTargetMs (${delayTargetMs})`);
  const headersMs = c.timeouts?.headersMs ?? DEFAULTS.timeouts.headersMs;
  const requestMs = c.timeouts?.requestMs ?? DEFAULTS.timeouts.requestMs;
  if (headersMs > requestMs) add(['timeouts', 'headersMs'], `must not exceed timeouts.requestMs (${requestMs})`);
  const budgetMs = c.shutdown?.timeoutMs ?? DEFAULTS.shutdown.timeoutMs;
  if ((c.shutdown?.drainDelayMs ?? 0) >= budgetMs) {
    add(
      ['shutdown', 'drainDelayMs'],
      `must be less than shutdown.timeoutMs (${budgetMs}): the drain delay is spent from the shutdown budget`,
    );
  }
  if (c.port !== undefined && c.port !== 0 && c.metrics?.port === c.port) {
    add(['metrics', 'port'], `must differ from port (${c.port})`);
  }
  problems.push(...clusterProblems(c, host));
  if (c.tls?.requestClientCert === true && c.tls.caFile === undefined) {
    add(['tls', 'requestClientCert'], 'requires tls.caFile: the client certificates are verified against it');
  }
  if (c.sessions?.store === 'coordination' && (c.coordination?.url ?? '') === '') {
    add(['sessions', 'store'], "'coordination' keeps sessions at coordination.url, which is not set: set it, or use the 'memory' store");
  }
  const co: Record<string, unknown> = isPlainObject(c.coordination) ? c.coordination : {};
  const coordinationMs = (key: 'leaseRenewMs' | 'timeoutMs' | 'leaseTtlMs') => {
    const v = co[key] ?? DEFAULTS.coordination[key];
    return typeof v === 'number' ? v : Number.NaN;
  };
  const renewMs = coordinationMs('leaseRenewMs');
  const coordinatorTimeoutMs = coordinationMs('timeoutMs');
  const ttlMs = coordinationMs('leaseTtlMs');
  // a renewal is sent leaseRenewMs after the previous one answered, which may take timeoutMs, and may itself time out
  if (renewMs + 2 * coordinatorTimeoutMs >= ttlMs) {
    add(
      ['coordination', co.leaseRenewMs === undefined && co.leaseTtlMs !== undefined ? 'leaseTtlMs' : 'leaseRenewMs'],
      `coordination.leaseRenewMs (${renewMs}) + 2 × coordination.timeoutMs (${coordinatorTimeoutMs}) must be less than coordination.leaseTtlMs (${ttlMs}): ` +
        'a holder whose renewal fails must stop its schedulers before the lease expires',
    );
  }
  return problems;
}

/**
 * The cluster's cross-field rules: the heartbeat, recycling, and the fork-storm
 * guards. A rule applies only to values of the right type (the schema reports
 * the others); an absent key takes its default.
 */
function clusterProblems(c: KConfig, host: ValidationHost): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: (string | number)[], message: string) => problems.push({ key: keyOf(path), path, message });
  const cl: Record<string, unknown> = isPlainObject(c.cluster) ? c.cluster : {};
  const defaults: Record<string, unknown> = DEFAULTS.cluster;
  const num = (key: string): number | undefined => {
    const v = cl[key] ?? defaults[key];
    return typeof v === 'number' ? v : undefined;
  };

  const interval = num('heartbeatIntervalMs');
  const timeout = num('heartbeatTimeoutMs');
  if (interval !== undefined && timeout !== undefined && timeout !== 0 && timeout <= interval) {
    if (cl['heartbeatTimeoutMs'] !== undefined) {
      const which = cl['heartbeatIntervalMs'] === undefined ? `${interval}, the default` : `${interval}`;
      add(['cluster', 'heartbeatTimeoutMs'], `must exceed cluster.heartbeatIntervalMs (${which}), or be 0 to turn the watchdog off`);
    } else {
      add(
        ['cluster', 'heartbeatIntervalMs'],
        `must be less than cluster.heartbeatTimeoutMs (${timeout}, the default); ` +
          'set cluster.heartbeatTimeoutMs above it, or to 0 to turn the watchdog off',
      );
    }
  }

  const jitter = num('maxRequestsJitter');
  if (jitter !== undefined && jitter > 0 && num('maxRequests') === 0) {
    add(
      ['cluster', 'maxRequestsJitter'],
      'requires cluster.maxRequests: the jitter spreads the recycling of workers that served maxRequests requests; ' +
        'set cluster.maxRequests, or remove cluster.maxRequestsJitter',
    );
  }

  const backoffMax = num('backoffMaxMs');
  const failures = num('crashLoopFailures');
  if (
    backoffMax !== undefined &&
    failures !== undefined &&
    backoffMax < FAST_RESTART_BACKOFF_MS &&
    failures > FAST_RESTART_FAILURES &&
    cl['allowFastRestarts'] !== true
  ) {
    // the default backoffMaxMs is far above the limit: this key is always in the input
    add(
      ['cluster', 'backoffMaxMs'],
      `is below ${FAST_RESTART_BACKOFF_MS} while cluster.crashLoopFailures (${failures}) is above ${FAST_RESTART_FAILURES}: ` +
        'the primary would fork crashing workers in a tight loop, and give up only after many forks; ' +
        'raise cluster.backoffMaxMs or lower cluster.crashLoopFailures, or set cluster.allowFastRestarts: true to opt in',
    );
  }

  const range = c.workers;
  if (typeof range === 'object' && typeof range.max === 'number' && range.min > range.max) {
    add(['workers', 'max'], `is below workers.min (${range.min}): the range would be empty; raise max or lower min`);
  }
  // the CPUs are counted (cgroup files read) only for a count that can be too high: any CPU allows 4 workers
  const workers = Number.isInteger(c.workers) && typeof c.workers === 'number' && c.workers <= MAX_WORKERS ? c.workers : 0;
  if (workers > MAX_WORKERS_PER_CPU && cl['allowOversubscription'] !== true) {
    const cpus = host.cpus ?? availableCpus();
    if (workers > MAX_WORKERS_PER_CPU * cpus) {
      add(
        ['workers'],
        `is more than ${MAX_WORKERS_PER_CPU} × the ${cpus} CPU${cpus === 1 ? '' : 's'} available (cgroup quota included): ` +
          "the workers would only compete for CPU time and memory; lower it or use 'auto', " +
          'or set cluster.allowOversubscription: true to opt in',
      );
    }
  }
  return problems;
}

/**
 * The rules of `docs` the schema cannot say: a license has an SPDX `identifier` or a `url`, not
 * both (OpenAPI 3.1); `bearerFormat` belongs to the `bearer` scheme; `docs.security` names declared
 * schemes, and an `oauth2` scheme's declared scopes.
 */
function docsSecurityProblems(c: KConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: (string | number)[], message: string) => problems.push({ key: keyOf(path), path, message });
  const docs: Record<string, unknown> = isPlainObject(c.docs) ? c.docs : {};
  const license = docs['license'];
  if (isPlainObject(license) && license['identifier'] !== undefined && license['url'] !== undefined) {
    add(['docs', 'license', 'identifier'], 'cannot be given together with docs.license.url (OpenAPI 3.1): keep one of them');
  }
  const schemes = isPlainObject(docs['securitySchemes']) ? docs['securitySchemes'] : {};
  for (const [name, scheme] of Object.entries(schemes)) {
    if (!isPlainObject(scheme) || scheme['type'] !== 'http' || scheme['bearerFormat'] === undefined) continue;
    if (String(scheme['scheme']).toLowerCase() !== 'bearer') {
      add(['docs', 'securitySchemes', name, 'bearerFormat'], `applies to the 'bearer' scheme only, not '${String(scheme['scheme'])}'`);
    }
  }
  if (docs['security'] !== undefined) {
    for (const p of requirementProblems(docs['security'], schemes)) add(['docs', 'security', ...p.path], p.message);
  }
  return problems;
}

function isServerUrl(url: string): boolean {
  if (url.startsWith('/')) return true;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * What a compiled schema finds wrong with `input`, one problem per leaf error, its path under `prefix`
 * (the service's settings are checked under `['settings']`); the errors about a path `ignored` accepts
 * are left out (settings read without their unset variables, see unset-settings.ts). An unknown key
 * names the closest key `schema` (the one `check` was compiled from) allows at its place, if one is
 * close: `unknown key; did you mean workers?` (closest-key.ts).
 */
export function schemaProblems(
  check: ValidateFunction,
  input: unknown,
  prefix: readonly (string | number)[] = [],
  ignored: (path: readonly (string | number)[]) => boolean = () => false,
  schema: unknown = check.schema,
): ConfigProblem[] {
  if (check(input)) return [];
  // a bad key name is reported once, by the check it failed, at the key itself (see `toProblem`)
  const errors = leaves(check.errors ?? [])
    .filter((e) => e.keyword !== 'propertyNames')
    .filter((e) => !ignored([...prefix, ...targetOf(e)]));
  return errors.map((e) => {
    const p = toProblem(e, schema);
    const path = [...prefix, ...p.path];
    return { ...p, key: keyOf(path), path };
  });
}

/**
 * `oneOf`/`anyOf` report their branches' errors too; keep the one that says
 * what was expected. Linear in the number of errors (a file with thousands of
 * unknown keys must not take quadratic time).
 */
function leaves(all: ErrorObject[]): ErrorObject[] {
  const unions = all.filter((o) => o.keyword === 'oneOf' || o.keyword === 'anyOf');
  if (unions.length === 0) return all;
  const isBranch = (e: ErrorObject) =>
    unions.some((o) => o !== e && e.schemaPath.startsWith(o.schemaPath.slice(0, -o.keyword.length)) && e.instancePath === o.instancePath);
  return all.filter((e) => !isBranch(e));
}

/** The path of the value an error is about: for `required`, the missing key's. */
function targetOf(e: ErrorObject): (string | number)[] {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return e.keyword === 'required' ? [...path, (e.params as { missingProperty: string }).missingProperty] : path;
}

function toProblem(e: ErrorObject, schema: unknown): ConfigProblem {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (e.propertyName !== undefined) {
    const full = [...path, e.propertyName];
    return { key: keyOf(full), path: full, message: `is not an allowed name: it ${e.message ?? 'is invalid'}` };
  }
  switch (e.keyword) {
    case 'discriminator': {
      // the one discriminator of the schema: a security scheme's `type`
      const { tag, tagValue } = e.params as { tag: string; tagValue: unknown };
      const full = [...path, tag];
      const allowed = SECURITY_SCHEME_TYPES.map((v) => JSON.stringify(v)).join(', ');
      const message = tagValue === undefined ? `is required: one of ${allowed}` : `must be one of ${allowed}`;
      return { key: keyOf(full), path: full, message };
    }
    case 'minProperties':
      if ((e.params as { limit: number }).limit === 1) return { key: keyOf(path), path, message: 'must not be empty' };
      return { key: keyOf(path), path, message: e.message ?? 'is invalid' };
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      const full = [...path, extra];
      const known = propertiesAt(schema, e.schemaPath);
      const closest = known === undefined ? undefined : closestKey(extra, known);
      return { key: keyOf(full), path: full, message: closest === undefined ? 'unknown key' : `unknown key; did you mean ${closest}?` };
    }
    case 'enum':
      return {
        key: keyOf(path),
        path,
        message: `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'oneOf':
      return {
        key: keyOf(path),
        path,
        message:
          path[0] === 'workers'
            ? path.length === 1
              ? "must be a positive integer, 'auto', or { min, max }"
              : "must be a positive integer or 'auto'"
            : 'does not match any allowed form',
      };
    default:
      return { key: keyOf(path), path, message: e.message ?? 'is invalid' };
  }
}

/**
 * The keys the object schema that refused a key declares: `schemaPath` is that of its
 * `additionalProperties` (`#/properties/cluster/additionalProperties`, `#/$defs/db/additionalProperties`),
 * a JSON pointer into `root`. Undefined when it leads nowhere.
 */
function propertiesAt(root: unknown, schemaPath: string): string[] | undefined {
  if (!schemaPath.startsWith('#/')) return undefined;
  let node = root;
  for (const part of schemaPath.split('/').slice(1, -1)) {
    const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    node = typeof node === 'object' && node !== null && Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  const properties = isPlainObject(node) ? node['properties'] : undefined;
  return isPlainObject(properties) ? Object.keys(properties) : undefined;
}

function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Freezes a value and everything in it. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    for (const inner of Object.values(v)) deepFreeze(inner);
    Object.freeze(v);
  }
  return v;
}
