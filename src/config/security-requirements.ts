import { createError } from '../errors/flotilla-error.ts';
import { isRecord } from '../utils/is-record.ts';
import { keyOf } from './config-error.ts';

/**
 * An OpenAPI Security Requirement object: scheme name → scopes (or roles). Every scheme it names
 * must be satisfied; `{}` is the anonymous alternative ("or nothing").
 *
 * @example
 * const requirement: SecurityRequirement = { oauth: ['books:write'] };
 */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/** What is wrong with one place of a requirement list: its path inside the list, and why. */
export interface RequirementProblem {
  path: (string | number)[];
  message: string;
}

/**
 * What is wrong with a `security` list (the config's `docs.security`, a route's or a group's
 * option) given the declared schemes (`docs.securitySchemes`): its shape, a scheme name that is not
 * declared, and, for an `oauth2` scheme, a scope none of its flows declares. Empty when it is right.
 *
 * @example
 * requirementProblems([{ apiKey: [] }], {}); // [{ path: [0, 'apiKey'], message: "names the security scheme 'apiKey', … not declared …" }]
 */
export function requirementProblems(requirements: unknown, schemes: Readonly<Record<string, unknown>>): RequirementProblem[] {
  if (!Array.isArray(requirements)) return [{ path: [], message: 'must be a list of security requirements, e.g. [{ apiKey: [] }]' }];
  const problems: RequirementProblem[] = [];
  for (const [i, requirement] of requirements.entries()) {
    if (!isRecord(requirement)) {
      problems.push({ path: [i], message: 'must be an object naming security schemes, e.g. { apiKey: [] }' });
      continue;
    }
    for (const [name, scopes] of Object.entries(requirement)) {
      const problem = scopesProblem(name, scopes, schemes);
      if (problem !== undefined) problems.push({ path: [i, name], message: problem });
    }
  }
  return problems;
}

function scopesProblem(name: string, scopes: unknown, schemes: Readonly<Record<string, unknown>>): string | undefined {
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && s !== '')) {
    return 'must be a list of scope names (`[]` for none)';
  }
  const scheme = Object.hasOwn(schemes, name) ? schemes[name] : undefined;
  if (scheme === undefined) {
    const declared = Object.keys(schemes);
    return `names the security scheme '${name}', which docs.securitySchemes does not declare (declared: ${declared.length === 0 ? 'none' : declared.join(', ')})`;
  }
  const known = oauthScopes(scheme);
  if (known === undefined) return undefined;
  const unknown = scopes.filter((s: string) => !known.has(s));
  if (unknown.length === 0) return undefined;
  return `names scope${unknown.length === 1 ? '' : 's'} ${unknown.map((s: string) => `'${s}'`).join(', ')} that no flow of the oauth2 scheme '${name}' declares`;
}

/** The scopes an `oauth2` scheme's flows declare; `undefined` for any other scheme (its scopes are free: roles). */
function oauthScopes(scheme: unknown): Set<string> | undefined {
  if (!isRecord(scheme) || scheme['type'] !== 'oauth2' || !isRecord(scheme['flows'])) return undefined;
  const scopes = new Set<string>();
  for (const flow of Object.values(scheme['flows'])) {
    if (isRecord(flow) && isRecord(flow['scopes'])) for (const scope of Object.keys(flow['scopes'])) scopes.add(scope);
  }
  return scopes;
}

/**
 * Refuses a route's or a group's `security` that is not a list of requirement objects, or that
 * names a scheme `docs.securitySchemes` does not declare (or an `oauth2` scope its flows do not
 * declare): when the route or the group is registered, so that a typo fails the service's setup
 * rather than ship a document that points at nothing.
 *
 * @example
 * checkSecurity([{ apiKey: [] }], config.docs.securitySchemes, 'route POST /books'); // throws FLO_ERR_BAD_SECURITY unless declared
 */
export function checkSecurity(
  security: unknown,
  schemes: Readonly<Record<string, unknown>>,
  owner: string,
): asserts security is readonly SecurityRequirement[] {
  const problems = requirementProblems(security, schemes);
  if (problems.length === 0) return;
  const reason = problems.map((p) => `${keyOf(['security', ...p.path])} ${p.message}`).join('; ');
  throw createError('FLO_ERR_BAD_SECURITY', { owner, reason });
}
