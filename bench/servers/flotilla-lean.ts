/** Contender 5: flotilla standalone, lean: the full defaults minus the request log line. */
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

await runStandalone(itemsConfig(portArg(), { logging: { requests: false } }));
