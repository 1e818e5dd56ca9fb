import type { Document, Scalar } from 'yaml';
import { yaml } from './yaml-lib.ts';
import { type LocatedProblem, pathOfAncestry } from './yaml-paths.ts';

/** The result of interpolating one string. */
export type Interpolated =
  | {
      ok: true;
      value: string;
      /** The text was exactly one `${...}` expression. */
      whole: boolean;
      /** The non-empty defaults `${VAR:-default}` put into `value` (VAR unset or empty), in order. */
      fallbacks: Fallback[];
    }
  | { ok: false; errors: string[] /** The unset variables among the errors' causes. */; unset: string[] };

/**
 * A non-empty default that `${VAR:-default}` put into a value, because VAR is unset or empty: in
 * production, a secret must not come from one (fallback-secrets.ts). An empty default (`${VAR:-}`)
 * means "not configured" and is no fallback.
 */
export interface Fallback {
  /** The variable. */
  name: string;
  /** Why its default was taken. */
  variable: 'unset' | 'empty';
  /** Where the default's text starts in the interpolated value, and where it ends (exclusive). */
  start: number;
  end: number;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${VAR}` and `${VAR:-default}` with values from `env`; `$${` is a
 * literal `${`. `${VAR:-default}` takes the default when VAR is unset or empty;
 * `${VAR}` with VAR unset is an error. Expressions do not nest.
 *
 * @example
 * interpolate('http://${HOST:-localhost}:${PORT}', { PORT: '8080' });
 * // { ok: true, value: 'http://localhost:8080', whole: false }
 */
export function interpolate(text: string, env: NodeJS.ProcessEnv): Interpolated {
  let value = '';
  let expressions = 0;
  const errors: string[] = [];
  const unset: string[] = [];
  const fallbacks: Fallback[] = [];
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf('$', i);
    if (at === -1) break;
    value += text.slice(i, at);
    if (text.startsWith('$${', at)) {
      value += '${';
      i = at + 3;
    } else if (text.startsWith('${', at)) {
      const end = text.indexOf('}', at + 2);
      if (end === -1) {
        errors.push('unterminated ${ (write $${ for a literal ${)');
        break;
      }
      expressions++;
      const result = expand(text.slice(at + 2, end), env);
      if (typeof result === 'string') value += result;
      else if ('fallback' in result) {
        fallbacks.push({ ...result.fallback, start: value.length, end: value.length + result.text.length });
        value += result.text;
      } else {
        errors.push(result.error);
        if (result.unset !== undefined) unset.push(result.unset);
      }
      i = end + 1;
    } else {
      value += '$';
      i = at + 1;
    }
  }
  if (errors.length > 0) return { ok: false, errors, unset };
  value += text.slice(i);
  const whole = expressions === 1 && text.startsWith('${') && text.indexOf('}') === text.length - 1;
  return { ok: true, value, whole, fallbacks };
}

type Expanded = string | { text: string; fallback: Pick<Fallback, 'name' | 'variable'> } | { error: string; unset?: string };

function expand(expression: string, env: NodeJS.ProcessEnv): Expanded {
  const sep = expression.indexOf(':-');
  const name = sep === -1 ? expression : expression.slice(0, sep);
  if (!NAME.test(name)) {
    const shown = JSON.stringify(expression.length > 40 ? `${expression.slice(0, 40)}…` : expression);
    return { error: `invalid expression \${${shown.slice(1, -1)}}; expected \${NAME} or \${NAME:-default}` };
  }
  const found = env[name];
  if (sep !== -1) {
    if (found !== undefined && found !== '') return found;
    const text = expression.slice(sep + 2);
    return text === '' ? text : { text, fallback: { name, variable: found === undefined ? 'unset' : 'empty' } };
  }
  if (found === undefined)
    return { error: `environment variable ${name} is not set (use \${${name}:-default} to give a default)`, unset: name };
  return found;
}

/** A value that names environment variables that are not set. */
export interface UnsetValue {
  /** The unset variables it names. */
  names: string[];
  path: (string | number)[];
  /** Where the value starts in the text. */
  offset: number;
}

/** A scalar value of a document that took non-empty `${VAR:-default}` fallbacks. */
export interface FallbackValue {
  path: (string | number)[];
  /** Where the value starts in the text. */
  offset: number;
  /** The value as interpolated (before any re-typing: `${PORT:-3000}` is `'3000'` here). */
  value: string;
  fallbacks: Fallback[];
}

/**
 * What `interpolateDocument` tolerates: a value under the top-level key `under` whose only
 * problem is unset variables is recorded in `found` instead of being a problem (and left as written).
 */
export interface UnsetTolerance {
  readonly under: string;
  readonly found: UnsetValue[];
}

/**
 * Interpolates every string scalar value of a parsed document in place (map
 * keys are left alone). A plain (unquoted, untagged) scalar that is exactly one
 * `${...}` expression is re-typed with the document's schema, so `port:
 * ${PORT:-3000}` is the number 3000; quoted scalars stay strings. Substituted
 * text never becomes YAML structure. With `lenient`, a value under its key
 * that names unset variables (and has no other problem) is recorded there instead.
 * Each value that took a non-empty `${VAR:-default}` is recorded in `fallbacks`, when given.
 *
 * @example
 * const fallbacks: FallbackValue[] = [];
 * const problems = interpolateDocument(parseDocument('port: ${PORT:-3000}'), {}, undefined, fallbacks);
 * // fallbacks: [{ path: ['port'], value: '3000', fallbacks: [{ name: 'PORT', variable: 'unset', start: 0, end: 4 }], … }]
 */
export function interpolateDocument(
  doc: Document,
  env: NodeJS.ProcessEnv,
  lenient?: UnsetTolerance,
  fallbacks?: FallbackValue[],
): LocatedProblem[] {
  const problems: LocatedProblem[] = [];
  yaml().visit(doc, {
    Scalar(key, node, ancestry) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('$')) return;
      const result = interpolate(node.value, env);
      if (!result.ok) {
        const path = pathOfAncestry(ancestry, node);
        const offset = node.range?.[0] ?? 0;
        if (lenient !== undefined && result.unset.length === result.errors.length && path[0] === lenient.under) {
          lenient.found.push({ names: result.unset, path, offset });
          return;
        }
        for (const message of result.errors) problems.push({ path, offset, message });
        return;
      }
      if (fallbacks !== undefined && result.fallbacks.length > 0)
        fallbacks.push({
          path: pathOfAncestry(ancestry, node),
          offset: node.range?.[0] ?? 0,
          value: result.value,
          fallbacks: result.fallbacks,
        });
      node.value = result.whole && isRetypable(node) ? retype(doc, result.value) : result.value;
    },
  });
  return problems;
}

function isRetypable(node: Scalar): boolean {
  return node.type === 'PLAIN' && node.tag === undefined;
}

/** Resolves text as an untagged plain scalar would be: `3000` → 3000, `false` → false, `~` → null. */
function retype(doc: Document, text: string): unknown {
  for (const tag of doc.schema.tags) {
    if (tag.default !== true || !('test' in tag) || tag.test === undefined || !tag.test.test(text)) continue;
    const resolved = tag.resolve(text, () => {}, doc.options);
    return yaml().isScalar(resolved) ? resolved.value : resolved;
  }
  return text;
}
