import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfigText } from '../../src/config/load-file.ts';
import { requirementProblems } from '../../src/config/security-requirements.ts';
import { configProblems, resolveConfig } from '../../src/config/validate.ts';

/** The problems of a config as `key: message` lines. */
const problems = (input: unknown) => configProblems(input, { cpus: 2 }).map((p) => `${p.key}: ${p.message}`);

/** The problems of a YAML text as `line: key: message` lines. */
function fileProblems(text: string): string[] {
  try {
    parseConfigText(text, 'app.yaml', {});
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /app\.yaml:\d+: docs\./);
    return error.problems.map((p) => `${p.line}: ${p.key}: ${p.message}`);
  }
  assert.fail('expected a ConfigError');
}

const SCHEMES = {
  apiKey: { type: 'apiKey', name: 'X-Api-Key', in: 'header', description: 'The key the operators hand out' },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  basic: { type: 'http', scheme: 'basic' },
  oauth: {
    type: 'oauth2',
    flows: {
      implicit: { authorizationUrl: 'https://auth.example.com/authorize', scopes: { 'books:read': 'read books' } },
      password: { tokenUrl: 'https://auth.example.com/token', scopes: {} },
      clientCredentials: { tokenUrl: 'https://auth.example.com/token', refreshUrl: 'https://auth.example.com/refresh', scopes: {} },
      authorizationCode: {
        authorizationUrl: 'https://auth.example.com/authorize',
        tokenUrl: 'https://auth.example.com/token',
        scopes: { 'books:write': 'add books' },
      },
    },
  },
  oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://auth.example.com/.well-known/openid-configuration' },
  mtls: { type: 'mutualTLS' },
} as const;

test('every kind of security scheme is accepted and kept as given; the default is none', () => {
  assert.deepEqual(resolveConfig({}).docs.securitySchemes, {});
  assert.equal(resolveConfig({}).docs.security, undefined);
  const config = resolveConfig({
    docs: { securitySchemes: SCHEMES, security: [{ bearer: [] }, { oauth: ['books:read', 'books:write'] }] },
  });
  assert.deepEqual(config.docs.securitySchemes, SCHEMES);
  assert.deepEqual(config.docs.security, [{ bearer: [] }, { oauth: ['books:read', 'books:write'] }]);
  assert.deepEqual(resolveConfig({ docs: { security: [] } }).docs.security, []);
});

test('a scheme is checked by its type: missing and unknown keys, bad values, each named', () => {
  assert.deepEqual(problems({ docs: { securitySchemes: { key: { type: 'apiKey', in: 'body', header: 'X-Key' } } } }), [
    "docs.securitySchemes.key: must have required property 'name'",
    'docs.securitySchemes.key.header: unknown key',
    'docs.securitySchemes.key.in: must be one of "header", "query", "cookie"',
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { k: { type: 'magic' }, j: { name: 'x' }, s: 'bearer' } } }), [
    'docs.securitySchemes.k.type: must be one of "apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"',
    'docs.securitySchemes.j.type: is required: one of "apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"',
    'docs.securitySchemes.s: must be object',
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { h: { type: 'http' }, t: { type: 'http', scheme: 'token value' } } } }), [
    "docs.securitySchemes.h: must have required property 'scheme'",
    'docs.securitySchemes.t.scheme: must match pattern "^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$"',
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { b: { type: 'http', scheme: 'basic', bearerFormat: 'JWT' } } } }), [
    "docs.securitySchemes.b.bearerFormat: applies to the 'bearer' scheme only, not 'basic'",
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { o: { type: 'openIdConnect', openIdConnectUrl: 'not a url' } } } }), [
    'docs.securitySchemes.o.openIdConnectUrl: must match format "uri"',
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { 'two words': { type: 'mutualTLS' } } } }), [
    'docs.securitySchemes.two words: is not an allowed name: it must match pattern "^[A-Za-z0-9._-]+$"',
  ]);
});

test('an oauth2 scheme needs at least one known flow, each with its URLs and scopes', () => {
  assert.deepEqual(problems({ docs: { securitySchemes: { o: { type: 'oauth2', flows: {} } } } }), [
    'docs.securitySchemes.o.flows: must not be empty',
  ]);
  assert.deepEqual(problems({ docs: { securitySchemes: { o: { type: 'oauth2' } } } }), [
    "docs.securitySchemes.o: must have required property 'flows'",
  ]);
  assert.deepEqual(
    problems({
      docs: {
        securitySchemes: {
          o: {
            type: 'oauth2',
            flows: { device: {}, password: { tokenUrl: '/token' }, authorizationCode: { tokenUrl: 'https://a/t', scopes: {} } },
          },
        },
      },
    }),
    [
      'docs.securitySchemes.o.flows.device: unknown key',
      "docs.securitySchemes.o.flows.password: must have required property 'scopes'",
      'docs.securitySchemes.o.flows.password.tokenUrl: must match format "uri"',
      "docs.securitySchemes.o.flows.authorizationCode: must have required property 'authorizationUrl'",
    ],
  );
});

test('docs.security names declared schemes, and an oauth2 scheme its declared scopes', () => {
  assert.deepEqual(problems({ docs: { securitySchemes: SCHEMES, security: [{ apiKey: [] }, {}, { bearer: ['admin'] }] } }), []);
  assert.deepEqual(
    problems({ docs: { securitySchemes: SCHEMES, security: [{ apikey: [] }, { oauth: ['books:read', 'books:delete'] }, { basic: 'x' }] } }),
    [
      'docs.security[2].basic: must be array',
      "docs.security[0].apikey: names the security scheme 'apikey', which docs.securitySchemes does not declare (declared: apiKey, bearer, basic, oauth, oidc, mtls)",
      "docs.security[1].oauth: names scope 'books:delete' that no flow of the oauth2 scheme 'oauth' declares",
    ],
  );
  assert.deepEqual(problems({ docs: { security: [{ bearer: [] }] } }), [
    "docs.security[0].bearer: names the security scheme 'bearer', which docs.securitySchemes does not declare (declared: none)",
  ]);
});

test('a license has an SPDX identifier or a URL, not both', () => {
  assert.deepEqual(problems({ docs: { license: { name: 'MIT', identifier: 'MIT' } } }), []);
  assert.deepEqual(problems({ docs: { license: { name: 'Dual', identifier: 'Apache-2.0 OR MIT' } } }), []);
  assert.deepEqual(problems({ docs: { license: { name: 'MIT', identifier: 'MIT', url: 'https://opensource.org/licenses/MIT' } } }), [
    'docs.license.identifier: cannot be given together with docs.license.url (OpenAPI 3.1): keep one of them',
  ]);
  assert.deepEqual(problems({ docs: { license: { name: 'MIT', identifier: 'not an expression!' } } }), [
    'docs.license.identifier: must match pattern "^[A-Za-z0-9.+()-]+( (AND|OR|WITH) [A-Za-z0-9.+()-]+)*$"',
  ]);
});

test('in a YAML file, each problem names its line', () => {
  const text = [
    'docs:', // 1
    '  securitySchemes:', // 2
    '    apiKey:', // 3
    '      type: apiKey', // 4
    '      name: X-Api-Key', // 5
    '      in: body', // 6
    '    bearer:', // 7
    '      type: jwt', // 8
    '  security:', // 9
    '    - apiKey: []', // 10
    '    - basic: []', // 11
  ].join('\n');
  assert.deepEqual(fileProblems(text), [
    '6: docs.securitySchemes.apiKey.in: must be one of "header", "query", "cookie"',
    '8: docs.securitySchemes.bearer.type: must be one of "apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"',
    "11: docs.security[1].basic: names the security scheme 'basic', which docs.securitySchemes does not declare (declared: apiKey, bearer)",
  ]);
});

test('requirementProblems: the shape of a route’s or a group’s list', () => {
  assert.deepEqual(requirementProblems([], {}), []);
  assert.deepEqual(requirementProblems([{}], {}), []);
  assert.deepEqual(requirementProblems({ apiKey: [] }, SCHEMES), [
    { path: [], message: 'must be a list of security requirements, e.g. [{ apiKey: [] }]' },
  ]);
  assert.deepEqual(requirementProblems(['apiKey', { apiKey: [''] }], SCHEMES), [
    { path: [0], message: 'must be an object naming security schemes, e.g. { apiKey: [] }' },
    { path: [1, 'apiKey'], message: 'must be a list of scope names (`[]` for none)' },
  ]);
  // a name that is a property of every object is not a declared scheme
  assert.match(
    requirementProblems([{ toString: [] }], SCHEMES)[0]?.message ?? '',
    /'toString', which docs.securitySchemes does not declare/,
  );
});
