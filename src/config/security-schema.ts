/**
 * The JSON Schema of `docs.securitySchemes` and `docs.security`: OpenAPI 3.1 Security Scheme and
 * Security Requirement objects, as the config declares them (schema.ts puts them under `docs`).
 * A scheme's `type` picks its shape (ajv's `discriminator`), so that a problem names the key that
 * is missing or unknown for that type rather than "does not match any allowed form".
 */

/** The `type`s of a security scheme, as OpenAPI 3.1 names them. */
export const SECURITY_SCHEME_TYPES = ['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS'] as const;

/** A component name (OpenAPI 3.1 `components` keys): also the name routes' `security` use. */
export const SCHEME_NAME = { type: 'string', pattern: '^[A-Za-z0-9._-]+$', maxLength: 128 } as const;

const description = { type: 'string', maxLength: 65536, description: 'Description of the scheme (CommonMark).' } as const;
const url = (what: string) => ({ type: 'string', format: 'uri', maxLength: 2048, description: what }) as const;

const scopes = {
  type: 'object',
  maxProperties: 1024,
  propertyNames: { type: 'string', minLength: 1, maxLength: 256 },
  additionalProperties: { type: 'string', maxLength: 1024 },
  description: 'The scopes of the flow: name → short description (may be empty: `{}`).',
} as const;

const refreshUrl = url('URL to obtain refresh tokens.');

const flows = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'The OAuth 2.0 flows the scheme supports (at least one).',
  properties: {
    implicit: {
      type: 'object',
      additionalProperties: false,
      required: ['authorizationUrl', 'scopes'],
      description: 'The implicit flow.',
      properties: { authorizationUrl: url('The authorization URL.'), refreshUrl, scopes },
    },
    password: {
      type: 'object',
      additionalProperties: false,
      required: ['tokenUrl', 'scopes'],
      description: 'The resource owner password flow.',
      properties: { tokenUrl: url('The token URL.'), refreshUrl, scopes },
    },
    clientCredentials: {
      type: 'object',
      additionalProperties: false,
      required: ['tokenUrl', 'scopes'],
      description: 'The client credentials flow.',
      properties: { tokenUrl: url('The token URL.'), refreshUrl, scopes },
    },
    authorizationCode: {
      type: 'object',
      additionalProperties: false,
      required: ['authorizationUrl', 'tokenUrl', 'scopes'],
      description: 'The authorization code flow.',
      properties: { authorizationUrl: url('The authorization URL.'), tokenUrl: url('The token URL.'), refreshUrl, scopes },
    },
  },
} as const;

/** One security scheme (an OpenAPI 3.1 Security Scheme object), by its `type`. */
const SECURITY_SCHEME = {
  type: 'object',
  discriminator: { propertyName: 'type' },
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'name', 'in'],
      properties: {
        type: { const: 'apiKey' },
        name: { type: 'string', minLength: 1, maxLength: 256, description: 'Name of the header, query parameter or cookie.' },
        in: { enum: ['header', 'query', 'cookie'], description: 'Where the key is sent.' },
        description,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'scheme'],
      properties: {
        type: { const: 'http' },
        scheme: {
          type: 'string',
          pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
          maxLength: 64,
          description: 'The HTTP authentication scheme (`Authorization` header), e.g. `bearer`, `basic`.',
        },
        bearerFormat: { type: 'string', minLength: 1, maxLength: 256, description: 'How the bearer token is formatted, e.g. `JWT`.' },
        description,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'flows'],
      properties: { type: { const: 'oauth2' }, flows, description },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'openIdConnectUrl'],
      properties: {
        type: { const: 'openIdConnect' },
        openIdConnectUrl: url('The OpenID Connect discovery URL (`…/.well-known/openid-configuration`).'),
        description,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { const: 'mutualTLS' }, description },
    },
  ],
} as const;

/** `docs.securitySchemes`: the schemes routes may name in `security`, by name. */
export const SECURITY_SCHEMES = {
  type: 'object',
  maxProperties: 256,
  propertyNames: SCHEME_NAME,
  additionalProperties: SECURITY_SCHEME,
  default: {},
  description:
    'The security schemes of the API (OpenAPI `components.securitySchemes`), by name: `apiKey` (`name`, `in`), `http` (`scheme`: `bearer`, `basic`…; `bearerFormat`), `oauth2` (`flows`), `openIdConnect` (`openIdConnectUrl`), `mutualTLS`. Routes and groups name them in their `security` option.',
} as const;

/** A list of OpenAPI Security Requirement objects: any one of them satisfies it; `[]`: none needed. */
export const SECURITY_REQUIREMENTS = {
  type: 'array',
  maxItems: 64,
  items: {
    type: 'object',
    maxProperties: 16,
    propertyNames: SCHEME_NAME,
    additionalProperties: { type: 'array', maxItems: 256, items: { type: 'string', minLength: 1, maxLength: 256 } },
  },
  description:
    "The document's default `security` (OpenAPI Security Requirement objects, `[{ name: [scopes] }]`): what an operation whose route and groups declare none requires; `[]`: nothing. Each name must be declared in `docs.securitySchemes`.",
} as const;
