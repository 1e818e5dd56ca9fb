import { problemType } from './codes.ts';
import { KError, titleOf } from './k-error.ts';

/** An RFC 9457 problem body with flotilla's `code` and `requestId` extensions. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  requestId: string;
  details?: unknown;
}

export interface ProblemResponse {
  status: number;
  body: Problem;
  headers: Record<string, string> | undefined;
  /** The error is the server's fault: log it with its stack. */
  internal: boolean;
}

const HIDDEN_DETAIL = 'An internal error occurred.';

/**
 * The one place where anything thrown becomes a response. A KError keeps its
 * status, code and message; anything else is a 500 whose message is shown only
 * outside production.
 */
export function toProblem(error: unknown, instance: string, requestId: string, production: boolean): ProblemResponse {
  if (error instanceof KError) {
    const body: Problem = {
      type: problemType(error.code),
      title: titleOf(error.status, error.code),
      status: error.status,
      detail: error.message,
      instance,
      code: error.code,
      requestId,
    };
    if (error.details !== undefined) body.details = error.details;
    return { status: error.status, body, headers: error.headers, internal: error.status >= 500 };
  }
  const detail = production ? HIDDEN_DETAIL : error instanceof Error ? error.message : String(error);
  return {
    status: 500,
    body: { type: problemType('INTERNAL'), title: titleOf(500, 'INTERNAL'), status: 500, detail, instance, code: 'INTERNAL', requestId },
    headers: undefined,
    internal: true,
  };
}
