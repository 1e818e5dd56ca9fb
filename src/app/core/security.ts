import { requirementProblems, type SecurityRequirement } from '../../config/security-requirements.ts';
import { keyOf } from '../../config/validate.ts';
import { createError } from '../../errors/flotilla-error.ts';

export type { SecurityRequirement } from '../../config/security-requirements.ts';

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
