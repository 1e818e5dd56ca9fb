import type { JsonSchema } from '../core/route.ts';

/**
 * Where the documents reference the problem schema.
 *
 * @example
 * { schema: { $ref: PROBLEM_REF } }
 */
export const PROBLEM_REF = '#/components/schemas/Problem';

/**
 * JSON Schema of the RFC 9457 problem body every flotilla error response has,
 * with the `code` and `requestId` extensions (`components.schemas.Problem`).
 *
 * @example
 * doc.components.schemas.Problem === PROBLEM_SCHEMA;
 */
export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An RFC 9457 problem detail, as `application/problem+json`.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId'],
  properties: {
    type: {
      type: 'string',
      format: 'uri-reference',
      description: 'Identifies the problem type',
      examples: ['urn:flotilla:problem:not-found'],
    },
    title: { type: 'string', description: 'Short summary of the problem type', examples: ['Not Found'] },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status code', examples: [404] },
    detail: { type: 'string', description: 'Explanation of this occurrence', examples: ['book 42 does not exist'] },
    instance: { type: 'string', format: 'uri-reference', description: 'The request path', examples: ['/books/42'] },
    code: { type: 'string', description: 'Stable, machine-readable error code', examples: ['NOT_FOUND'] },
    requestId: { type: 'string', description: 'Id of the request (also the `X-Request-Id` response header)' },
    details: {
      description:
        'Extra, client-safe information about this occurrence. For `VALIDATION_FAILED`: `{ errors: ValidationIssue[] }`, every failed check.',
      // no `type`: any value is allowed; an object's `errors`, when it has one, are the failed checks
      properties: { errors: { type: 'array', items: { $ref: '#/components/schemas/ValidationIssue' } } },
    },
  },
  additionalProperties: true,
};

/**
 * The response object for an error status, as `application/problem+json`.
 *
 * @example
 * responses['404'] = problemResponse('Not Found');
 */
export function problemResponse(description: string): { description: string; content: Record<string, { schema: JsonSchema }> } {
  return { description, content: { 'application/problem+json': { schema: { $ref: PROBLEM_REF } } } };
}

/**
 * One failed check of a `VALIDATION_FAILED` problem (`details.errors[]`),
 * `components.schemas.ValidationIssue`.
 *
 * @example
 * { in: 'body', path: '/title', message: 'must be string' }
 */
export const VALIDATION_ISSUE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['in', 'path', 'message'],
  properties: {
    in: { enum: ['params', 'querystring', 'headers', 'cookies', 'body'], description: 'The part of the request that failed' },
    path: { type: 'string', description: 'JSON Pointer of the failing value inside that part', examples: ['/title'] },
    message: { type: 'string', examples: ['must be string'] },
  },
};
