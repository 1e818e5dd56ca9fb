/**
 * The registry of stable error codes: code → HTTP status → title.
 * Every problem response flotilla produces itself carries one of these codes;
 * the error table of docs/reference/errors.md is checked against this object by a test.
 */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400, title: 'Bad Request' },
  VALIDATION_FAILED: { status: 400, title: 'Validation Failed' },
  INVALID_PAGINATION: { status: 400, title: 'Invalid Pagination' },
  MALFORMED_JSON: { status: 400, title: 'Malformed JSON' },
  INVALID_UTF8: { status: 400, title: 'Invalid UTF-8' },
  FORBIDDEN_KEY: { status: 400, title: 'Forbidden Key' },
  BAD_URL: { status: 400, title: 'Bad URL' },
  BAD_UPGRADE: { status: 400, title: 'Bad Upgrade Request' },
  UNSUPPORTED_SUBPROTOCOL: { status: 400, title: 'Unsupported Subprotocol' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  CROSS_ORIGIN_REQUEST: { status: 403, title: 'Cross-Origin Request' },
  NOT_FOUND: { status: 404, title: 'Not Found' },
  ROUTE_NOT_FOUND: { status: 404, title: 'Route Not Found' },
  PARAM_TOO_LONG: { status: 404, title: 'Parameter Too Long' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method Not Allowed' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout' },
  CONFLICT: { status: 409, title: 'Conflict' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition Failed' },
  UPGRADE_REQUIRED: { status: 426, title: 'Upgrade Required' },
  URI_TOO_LONG: { status: 414, title: 'URI Too Long' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type' },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range Not Satisfiable' },
  UNPROCESSABLE: { status: 422, title: 'Unprocessable Content' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too Many Requests' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large' },
  INTERNAL: { status: 500, title: 'Internal Server Error' },
  UNAVAILABLE: { status: 503, title: 'Service Unavailable' },
  OVERLOADED: { status: 503, title: 'Service Unavailable' },
  HANDLER_TIMEOUT: { status: 503, title: 'Service Unavailable' },
  TOO_MANY_WEBSOCKETS: { status: 503, title: 'Service Unavailable' },
  SESSION_STORE_UNAVAILABLE: { status: 503, title: 'Service Unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The problem `type` URI for a code: a stable URN, e.g. `urn:flotilla:problem:not-found`. */
export function problemType(code: string): string {
  return `urn:flotilla:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}
