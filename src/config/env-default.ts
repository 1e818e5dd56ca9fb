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
