/** Contender 4: flotilla standalone with its full defaults (request logging, CORS, metrics, the no-op tracer). */
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

await runStandalone(itemsConfig(portArg()));
