/** flotilla full with `compression.enabled: false`: the other side of the compression scenarios' CPU per request. */
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

await runStandalone(itemsConfig(portArg(), { compression: { enabled: false } }));
