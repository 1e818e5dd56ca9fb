import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../../helpers/postgres-server.ts';
import { booksContract } from './books-backends.ts';

// The example on PostgreSQL: a throwaway server per test (tools/postgres-server.ts).
booksContract('postgres', SKIP_WITHOUT_POSTGRES, async (t) => ({ databaseUrl: (await postgresServer(t)).url }));
