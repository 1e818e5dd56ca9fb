import type { SecurityRequirement } from '../../config/security-requirements.ts';
import type { DocsSecurityScheme } from '../../config/types.ts';
import type { JsonSchema } from '../core/route.ts';

/**
 * An OpenAPI 3.1 parameter object.
 *
 * @example
 * { name: 'id', in: 'path', required: true, schema: { type: 'string' } }
 */
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
  description?: string;
  deprecated?: boolean;
}

/**
 * An OpenAPI 3.1 media type map (`content`).
 *
 * @example
 * { 'application/json': { schema: { type: 'object' } } }
 */
export type OpenApiContent = Record<string, { schema?: JsonSchema; [key: string]: unknown }>;

/**
 * An OpenAPI 3.1 response object.
 *
 * @example
 * { description: 'OK', content: { 'application/json': { schema: book } } }
 */
export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: OpenApiContent;
}

/**
 * An OpenAPI 3.1 header object (a response's `headers`).
 *
 * @example
 * { description: 'Seconds to wait before trying again', required: true, schema: { type: 'integer', minimum: 0 } }
 */
export interface OpenApiHeader {
  description?: string;
  required?: boolean;
  schema: JsonSchema;
}

/**
 * An OpenAPI 3.1 operation object.
 *
 * @example
 * doc.paths['/books']?.get?.operationId; // 'getBooks'
 */
export interface OpenApiOperation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: OpenApiContent };
  responses: Record<string, OpenApiResponse>;
  /** A WebSocket endpoint (a route's `websocket`): its subprotocols, none when it names none. OpenAPI has no field of its own for it. */
  'x-websocket'?: { protocols: string[] };
  /** What the operation requires (OpenAPI Security Requirement objects); `[]`: nothing. */
  security?: SecurityRequirement[];
}

/**
 * The lower-case method keys of an OpenAPI path item.
 *
 * @example
 * const method: OpenApiMethod = 'get';
 */
export type OpenApiMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';

/**
 * An OpenAPI 3.1 path item: operations by method.
 *
 * @example
 * doc.paths['/books/{id}']; // { get: …, delete: … }
 */
export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

/**
 * The OpenAPI 3.1.0 document `buildOpenApi` produces (and `GET {docs.path}/openapi.json` serves).
 *
 * @example
 * const doc: OpenApiDocument = buildOpenApi(resolveConfig(), routes);
 * doc.paths['/books/{id}']?.get?.operationId; // 'getBooksById'
 */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: {
    title: string;
    version: string;
    description?: string;
    contact?: { name?: string; url?: string; email?: string };
    license?: { name: string; identifier?: string; url?: string };
  };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  /** The default of operations that declare no `security` of their own (`docs.security`). */
  security?: SecurityRequirement[];
  paths: Record<string, OpenApiPathItem>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes?: Record<string, DocsSecurityScheme> };
}
