import { STATUS_CODES } from '../utils/node-http.ts';
import { ERROR_CODES, type ErrorCode } from './codes.ts';
import { createError } from './flotilla-error.ts';

export interface KErrorOptions {
  /** Extra, client-safe information added to the problem body as `details`. */
  details?: unknown;
  /** The underlying error; logged, never sent to the client. */
  cause?: unknown;
  /** Response headers to send with the problem (e.g. `Allow`, `Retry-After`). */
  headers?: Record<string, string>;
}

type HelperArgs = [message?: string, options?: KErrorOptions];

/**
 * An error meant for the client: its status, code and message become an RFC 9457
 * problem response (`detail` is the message).
 *
 * @example
 * throw KError.notFound(`book ${id} does not exist`);
 * throw new KError(409, 'ISBN_TAKEN', 'a book with this ISBN exists', { details: { isbn } });
 */
export class KError extends Error {
  override name = 'KError';
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;
  readonly headers?: Record<string, string>;

  constructor(status: number, code: string, message: string, options: KErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw createError('FLO_ERR_BAD_STATUS', { subject: 'KError status', range: '400..599', status });
    }
    this.status = status;
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
    if (options.headers !== undefined) this.headers = options.headers;
  }

  /** Builds a KError from a registered code, using its status and title. */
  static of(code: ErrorCode, message?: string, options?: KErrorOptions): KError {
    const { status, title } = ERROR_CODES[code];
    return new KError(status, code, message ?? title, options);
  }

  static badRequest(...a: HelperArgs): KError {
    return KError.of('BAD_REQUEST', ...a);
  }
  static unauthorized(...a: HelperArgs): KError {
    return KError.of('UNAUTHORIZED', ...a);
  }
  static forbidden(...a: HelperArgs): KError {
    return KError.of('FORBIDDEN', ...a);
  }
  static notFound(...a: HelperArgs): KError {
    return KError.of('NOT_FOUND', ...a);
  }
  static conflict(...a: HelperArgs): KError {
    return KError.of('CONFLICT', ...a);
  }
  static unprocessable(...a: HelperArgs): KError {
    return KError.of('UNPROCESSABLE', ...a);
  }
  static tooManyRequests(...a: HelperArgs): KError {
    return KError.of('TOO_MANY_REQUESTS', ...a);
  }
  static internal(...a: HelperArgs): KError {
    return KError.of('INTERNAL', ...a);
  }
  static unavailable(...a: HelperArgs): KError {
    return KError.of('UNAVAILABLE', ...a);
  }
}

/** The title of a problem: the registered title, else the HTTP reason phrase. */
export function titleOf(status: number, code: string): string {
  const known = (ERROR_CODES as Record<string, { title: string } | undefined>)[code];
  return known?.title ?? STATUS_CODES[status] ?? 'Error';
}
