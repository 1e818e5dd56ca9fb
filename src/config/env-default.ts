import { CONFIG_SCHEMA } from './schema.ts';

/** The values of the `env` key. */
export type Env = (typeof CONFIG_SCHEMA.properties.env.enum)[number];

const ENVS: readonly string[] = CONFIG_SCHEMA.properties.env.enum;

/**
 * The `env` of a config that names none: `NODE_ENV` when that is one of
 * `development`, `staging` or `production` (so an image that sets
 * `NODE_ENV=production` serves no docs and hides internal errors without the
 * config saying so), undefined otherwise (the schema's default,
 * `development`, then applies). Any other `NODE_ENV` (`test`…) is ignored.
 *
 * @example
 * envFromNodeEnv('production'); // 'production'
 * envFromNodeEnv('test'); // undefined
 */
export function envFromNodeEnv(nodeEnv: string | undefined = process.env['NODE_ENV']): Env | undefined {
  return nodeEnv !== undefined && ENVS.includes(nodeEnv) ? (nodeEnv as Env) : undefined;
}

/** The environment a command runs in, and why: what its start-up log line says. */
export interface EnvChoice {
  env: Env;
  /** Why, e.g. `config env`, `NODE_ENV`, `flotilla start's default; NODE_ENV unset`. */
  reason: string;
}

/**
 * The environment of a config read by a command: the config's `env`, else `NODE_ENV` when it is
 * `development`, `staging` or `production`, else the command's own default (`flotilla start`:
 * `production`; `flotilla dev` and a standalone App: `development`). `from` names that default
 * in the reason.
 *
 * @example
 * chooseEnv(undefined, undefined, { env: 'production', from: "flotilla start's default" });
 * // { env: 'production', reason: "flotilla start's default; NODE_ENV unset" }
 */
export function chooseEnv(configEnv: Env | undefined, nodeEnv: string | undefined, fallback: { env: Env; from: string }): EnvChoice {
  if (configEnv !== undefined) return { env: configEnv, reason: 'config env' };
  const fromNodeEnv = envFromNodeEnv(nodeEnv);
  if (fromNodeEnv !== undefined) return { env: fromNodeEnv, reason: 'NODE_ENV' };
  const why = nodeEnv === undefined || nodeEnv === '' ? 'NODE_ENV unset' : `NODE_ENV=${JSON.stringify(nodeEnv)} ignored`;
  return { env: fallback.env, reason: `${fallback.from}; ${why}` };
}
