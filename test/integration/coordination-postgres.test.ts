import { coordinationSuite } from '../helpers/coordination-suite.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';

// coordination.url on PostgreSQL: three clusters on one throwaway PostgreSQL (see the suite).
coordinationSuite({ name: 'postgres', skip: SKIP_WITHOUT_POSTGRES, start: (t) => postgresServer(t) });
