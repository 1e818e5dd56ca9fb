#!/usr/bin/env node
// a namespace import: a named one of an export this Node lacks would fail before the version check
import * as nodeModule from 'node:module';
import { unsupportedNode } from './node-version.ts';

/**
 * The `flotilla` executable. Before loading anything else it turns on Node's
 * on-disk compile cache (V8 code cache: the modules of a later start are not
 * compiled again), and hands its directory to the workers it forks through
 * `NODE_COMPILE_CACHE`, which Node reads before loading their first module.
 * `NODE_COMPILE_CACHE=<dir>` moves the cache (default: `<tmpdir>/node-compile-cache`),
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off; a cache that cannot be used is ignored.
 * First of all, it says in one line when this Node.js is too old. For
 * `flotilla start`, it forks the first worker before the config is read
 * (src/primary/early-worker.ts).
 */
const unsupported = unsupportedNode(process.versions.node);
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
try {
  const { directory } = nodeModule.enableCompileCache();
  // set already when the user chose the directory (Node then reports its versioned subdirectory)
  if (directory !== undefined) process.env['NODE_COMPILE_CACHE'] ??= directory;
} catch {
  // an optimization only: start without it
}

// `flotilla start`: its first worker starts while this process reads the config (see early-worker.ts)
const configFile = await startsCluster(process.argv.slice(2));
if (configFile !== undefined) (await import('../primary/early-worker.ts')).forkEarlyWorker(configFile);
await import('./commands.ts');

/**
 * The config file of a valid `flotilla start` (given, or found as the commands will find it; `null`
 * when there is none), `undefined` for any other command line (the commands' to answer).
 */
async function startsCluster(argv: string[]): Promise<string | null | undefined> {
  const [{ parseCli }, { discoverConfig }] = await Promise.all([import('./args.ts'), import('./discover-config.ts')]);
  try {
    const args = parseCli(argv);
    return args.command === 'start' ? (discoverConfig(args.config)?.file ?? null) : undefined;
  } catch {
    return undefined;
  }
}
