#!/usr/bin/env node
import { enableCompileCache } from 'node:module';

/**
 * The `flotilla` executable. Before loading anything else it turns on Node's
 * on-disk compile cache (V8 code cache: the modules of a later start are not
 * compiled again), and hands its directory to the workers it forks through
 * `NODE_COMPILE_CACHE`, which Node reads before loading their first module.
 * `NODE_COMPILE_CACHE=<dir>` moves the cache (default: `<tmpdir>/node-compile-cache`),
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off; a cache that cannot be used is ignored.
 */
try {
  const { directory } = enableCompileCache();
  // set already when the user chose the directory (Node then reports its versioned subdirectory)
  if (directory !== undefined) process.env['NODE_COMPILE_CACHE'] ??= directory;
} catch {
  // an optimization only: start without it
}

await import('./commands.ts');
