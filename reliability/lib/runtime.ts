import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileToPackage } from '../../tools/compile.ts';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How the clusters run: the CLI and the fixture service, and the Node flags they need. */
export interface Runtime {
  kind: 'compiled' | 'source';
  cli: string;
  service: string;
  execArgv: string[];
}

/** From the TypeScript sources, with Node's type stripping (what `npm start` does). */
export function sourceRuntime(): Runtime {
  return {
    kind: 'source',
    cli: join(ROOT, 'src/cli/main.ts'),
    service: join(ROOT, 'reliability/service.ts'),
    execArgv: ['--conditions=source'],
  };
}

/**
 * Compiles flotilla (src/) and the fixture service to JavaScript in a
 * temporary package named `flotilla`, as the published package and the Docker
 * image run: no type stripping at start-up, which matters for how fast a
 * replacement worker boots. Removed when the process exits.
 */
export function compiledRuntime(): Runtime {
  const out = compileToPackage(['reliability/service.ts']);
  return { kind: 'compiled', cli: join(out, 'src/cli/main.js'), service: join(out, 'reliability/service.js'), execArgv: [] };
}
