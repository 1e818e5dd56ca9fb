import { coordinationSuite } from '../helpers/coordination-suite.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

// coordination.url on Redis: three clusters on one throwaway redis-server (see the suite).
coordinationSuite({ name: 'redis', skip: SKIP_WITHOUT_REDIS, start: (t) => redisServer(t) });
