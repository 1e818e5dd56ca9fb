import type { TestContext } from 'node:test';
import { PostgresServer } from '../../tools/postgres-server.ts';
import { requireTool } from './require-tool.ts';

export type { PostgresServer } from '../../tools/postgres-server.ts';

/** A test's `skip` option: skipped without PostgreSQL's server, except in CI, where it must run (see `requireTool`). */
export const SKIP_WITHOUT_POSTGRES = requireTool('postgresql');

/**
 * A throwaway PostgreSQL for the length of the test (`tools/postgres-server.ts`): `initdb` in a
 * temporary directory, `postgres` on a free port of 127.0.0.1, run as an unprivileged user when the
 * tests run as root; stopped and removed after the test.
 *
 * @example
 * const pg = await postgresServer(t);
 * await pg.stop(); await pg.start(); // down and back, same port, same data
 */
export async function postgresServer(t: TestContext): Promise<PostgresServer> {
  const server = await PostgresServer.create();
  t.after(() => server.dispose());
  return server;
}
