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
  /** The request's trace id, when its span is recorded. */
  traceId?: string;
  details?: unknown;
}

/** The request a problem answers. */
export interface ProblemSubject {
  /** The request path. */
  instance: string;
  requestId: string;
  traceId: string | undefined;
  /** Hide the messages of errors that are not KErrors. */
  production: boolean;
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
export function toProblem(error: unknown, subject: ProblemSubject): ProblemResponse {
  if (isKError(error)) {
    const body = problemBody(error.status, error.code, error.message, subject);
    if (error.details !== undefined) body.details = error.details;
    return { status: error.status, body, headers: error.headers, internal: error.status >= 500 };
  }
  const detail = subject.production ? HIDDEN_DETAIL : describeThrown(error);
  return { status: 500, body: problemBody(500, 'INTERNAL', detail, subject), headers: undefined, internal: true };
}

/** `instanceof`, which a Proxy's `getPrototypeOf` trap can make throw. */
function isKError(error: unknown): error is KError {
  try {
    return error instanceof KError;
  } catch {
    return false;
  }
}

/** The message of anything thrown; a value that throws when read (a throwing getter or `toString`, a null prototype) is described as such. */
export function describeThrown(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return `a value that cannot be shown was thrown (${typeof error})`;
  }
}

function problemBody(status: number, code: string, detail: string, subject: ProblemSubject): Problem {
  const body: Problem = {
    type: problemType(code),
    title: titleOf(status, code),
    status,
    detail,
    instance: subject.instance,
    code,
    requestId: subject.requestId,
  };
  if (subject.traceId !== undefined) body.traceId = subject.traceId;
  return body;
}
