/**
 * The server of `bench/production-defaults-cost.ts`: the App of `services/production-defaults.ts`,
 * listening. The same file runs on both sides of the comparison, each importing `flotilla` from its own
 * compiled package.
 */
import { portArg } from '../services/data.ts';
import { runStandalone } from '../services/items.ts';
import { productionDefaultsConfig, registerPostItems } from '../services/production-defaults.ts';

await runStandalone(productionDefaultsConfig(portArg()), registerPostItems);
