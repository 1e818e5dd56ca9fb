import { dirname, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One human line for a service that failed to start: the error's message and
 * the first stack frame in the service's own code (its directory, outside
 * `node_modules`), e.g. `TypeError: db is undefined (at service.ts:12:7)`.
 * This is what the primary prints on stderr before it exits, instead of a
 * crash-loop story told in JSON lines.
 *
 * @example
 * describeServiceError(error, '/srv/app/service.ts'); // 'Error: no DATABASE_URL (at service.ts:4:9)'
 */
export function describeServiceError(error: unknown, servicePath: string): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : `thrown: ${String(error)}`;
  const frame = serviceFrame(error, dirname(servicePath));
  return `${message.split('\n', 1)[0]}${frame === undefined ? '' : ` (at ${frame})`}`;
}

const LOCATION = /(?:\(|at |^)((?:file:\/\/)?\/[^():\s]+(?:\.[a-z]+)?):(\d+)(?::(\d+))?/;

function serviceFrame(error: unknown, root: string): string | undefined {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  for (const line of stack.split('\n')) {
    const m = LOCATION.exec(line.trim());
    if (m === null) continue;
    const file = m[1]?.startsWith('file://') ? fileURLToPath(m[1]) : (m[1] ?? '');
    const rel = relative(root, file);
    if (rel.startsWith('..') || rel.split(sep).includes('node_modules')) continue;
    return `${rel}:${m[2]}${m[3] === undefined ? '' : `:${m[3]}`}`;
  }
  return undefined;
}
