import { scopeContext } from '../../utils/context-storage.ts';
import type { RequestContext } from './request-context.ts';

/**
 * The current request's `RequestContext` (its `requestId`, `logger`, `signal`,
 * `state`, `otel`) from any function called while the request is handled, its
 * awaits and callbacks included, without passing `ctx` down; inside a
 * scheduled job's run, that run's own context (`requestId` `job:<name>:<fire>`);
 * `undefined` anywhere else (start-up, a timer set outside any request).
 *
 * @example
 * export async function audit(action: string) {
 *   const context = currentContext();
 *   context?.logger.info({ action }, 'audited'); // the line carries the request id
 *   await db.insert('audit', { action, request: context?.requestId }, { signal: context?.signal });
 * }
 */
export function currentContext(): RequestContext | undefined {
  return scopeContext() as RequestContext | undefined;
}
