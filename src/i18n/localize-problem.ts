import type { Problem } from '../errors/problem.ts';
import { isRecord } from '../utils/is-record.ts';
import type { Translator } from './translator.ts';

/**
 * Translates a problem in place when the catalog has the keys:
 * `errors.<CODE>` for the detail (parameters: `detail` and the fields of
 * `details`), `validation.<keyword>` for each validation issue (parameters:
 * the validator's, plus `path` and `in`). Anything without a translation keeps
 * its original message. Returns whether something was translated.
 *
 * @example
 * // fr.yaml: errors: { NOT_FOUND: "Introuvable : {detail}" }
 * localizeProblem(problem, translator, 'fr');
 */
export function localizeProblem(problem: Problem, translator: Translator, locale: string): boolean {
  let changed = false;
  const translate = (key: string, params: Record<string, unknown>): string | undefined => {
    const text = translator.t(locale, key, params);
    if (text === key) return undefined;
    changed = true;
    return text;
  };
  const details = isRecord(problem.details) ? problem.details : {};
  problem.detail = translate(`errors.${problem.code}`, { ...details, detail: problem.detail }) ?? problem.detail;
  if (problem.code === 'VALIDATION_FAILED' && Array.isArray(details['errors'])) {
    for (const issue of details['errors'] as unknown[]) {
      if (!isRecord(issue) || typeof issue['keyword'] !== 'string') continue;
      const params = { ...(isRecord(issue['params']) ? issue['params'] : {}), path: issue['path'], in: issue['in'] };
      issue['message'] = translate(`validation.${issue['keyword']}`, params) ?? issue['message'];
    }
  }
  return changed;
}
