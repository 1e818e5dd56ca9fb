import { postgresCoordinator } from '../../src/coordination/postgres.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { coordinatorContract } from './coordinator-contract.ts';

coordinatorContract({
  name: 'postgres',
  skip: SKIP_WITHOUT_POSTGRES,
  server: (t) => postgresServer(t),
  urlFor: (port) => `postgres://flotilla@127.0.0.1:${port}/postgres`,
  open: postgresCoordinator,
});
