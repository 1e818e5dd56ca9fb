import { ERROR_CODES, type ErrorCode } from '../../errors/codes.ts';
import { describeValue } from '../../errors/flotilla-error.ts';

/**
 * A problem a route's handler (or its middlewares) may answer with, declared in its `problems`
 * option for the OpenAPI document: a code of flotilla's registry (`'CONFLICT'`: `KError.conflict`,
 * its status and title), a code of the service's own with its status (`{ status: 409, code:
 * 'ISBN_TAKEN' }`: `new KError(409, 'ISBN_TAKEN', …)`), or a bare status (`409`) whatever its code.
 * A `description` says when it happens.
 *
 * @example
 * problems: ['CONFLICT', { status: 422, code: 'OUT_OF_PRINT', description: 'the book can no longer be ordered' }]
 */
export type RouteProblem = ErrorCode | number | { readonly status: number; readonly code?: string; readonly description?: string };

/**
 * What is wrong with a route's `problems` option, or `undefined` when nothing is: a list of
 * registered codes, statuses in 400..599, or `{ status, code?, description? }` objects.
 *
 * @example
 * routeProblemsProblem(['CONFLICT']); // undefined
 * routeProblemsProblem(['CONFLICTS']); // "problems[0]: 'CONFLICTS' is not a registered error code (…)"
 */
export function routeProblemsProblem(problems: unknown): string | undefined {
  if (problems === undefined) return undefined;
  if (!Array.isArray(problems)) return `problems must be a list, got ${describeValue(problems)}`;
  for (const [i, problem] of problems.entries()) {
    const at = `problems[${i}]`;
    if (typeof problem === 'string') {
      if (!Object.hasOwn(ERROR_CODES, problem)) {
        return `${at}: '${problem}' is not a registered error code (a code of the service's own is { status, code })`;
      }
    } else if (typeof problem === 'number') {
      if (!isErrorStatus(problem)) return `${at}: a status must be an integer in 400..599, got ${problem}`;
    } else if (typeof problem === 'object' && problem !== null && !Array.isArray(problem)) {
      const { status, code, description, ...rest } = problem as Record<string, unknown>;
      const unknown = Object.keys(rest)[0];
      if (unknown !== undefined) return `${at}: unknown key '${unknown}' (known: status, code, description)`;
      if (!isErrorStatus(status)) return `${at}.status must be an integer in 400..599, got ${describeValue(status)}`;
      if (code !== undefined && (typeof code !== 'string' || code === '')) return `${at}.code must be a non-empty string`;
      if (description !== undefined && typeof description !== 'string') return `${at}.description must be a string`;
    } else {
      return `${at}: expected an error code, a status or { status, code, description }, got ${describeValue(problem)}`;
    }
  }
  return undefined;
}

function isErrorStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599;
}
