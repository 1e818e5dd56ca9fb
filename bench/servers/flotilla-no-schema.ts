/** flotilla standalone, full defaults, with the items routes declaring no response schema: replies are JSON.stringify'd. */
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

await runStandalone(itemsConfig(portArg()), undefined, undefined, false);
