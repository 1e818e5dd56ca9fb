import type { Document, LineCounter, Node, YAMLError } from 'yaml';
import { type FallbackValue, interpolateDocument, type UnsetTolerance } from './interpolate.ts';
import { removeUnset } from './unset-settings.ts';
import { yaml } from './yaml-lib.ts';
import { keyText, type LocatedProblem, pathAtOffset, pathOfAncestry } from './yaml-paths.ts';

/** Most alias expansions a config file may use; more fails fast (alias bombs). */
export const MAX_ALIAS_COUNT = 100;

/** What reading YAML text produced: the plain value (unless the text is unusable) and every problem found. */
export interface YamlRead {
  doc: Document;
  lineCounter: LineCounter;
  problems: LocatedProblem[];
  /** The values that took a non-empty `${VAR:-default}` (see `interpolateDocument`). */
  fallbacks: FallbackValue[];
  /** The document as plain data; `{}` for an empty document; absent when it could not be built. */
  value?: unknown;
}

/** Tags that only restate what plain YAML already means; every other tag is refused. */
const ALLOWED_TAGS = new Set(['!', ...['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`)]);

const FRIENDLY: Partial<Record<string, string>> = {
  MULTIPLE_DOCS: 'only one YAML document is allowed (remove the second ---)',
  NON_STRING_KEY: 'keys must be plain strings',
};

/**
 * Parses one YAML document safely (core schema, no merge keys, unique keys,
 * no custom tags, bounded aliases) and interpolates `${VAR}` in its string
 * values. Never throws for any input text. With `lenient` (see
 * `interpolateDocument`), the values it records are left out of `value`.
 *
 * @example
 * const { value, problems } = readYaml('port: ${PORT:-3000}\n', process.env); // value: { port: 3000 }
 */
export function readYaml(text: string, env: NodeJS.ProcessEnv, lenient?: UnsetTolerance): YamlRead {
  const lineCounter = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, {
    version: '1.2',
    schema: 'core',
    merge: false,
    // Duplicate keys are refused by `structureProblems`, in linear time: yaml's own check is quadratic in a map's size.
    uniqueKeys: false,
    stringKeys: true,
    resolveKnownTags: false,
    // yaml's pretty errors copy the whole source line into every message: quadratic on a long line with many errors
    prettyErrors: false,
    strict: true,
    logLevel: 'error',
    lineCounter,
  });
  const problems = [...doc.errors, ...doc.warnings].filter((e) => !isRefusedTag(e)).map((e) => yamlProblem(doc, lineCounter, e));
  const structure = structureProblems(doc);
  problems.push(...structure.problems);
  const fallbacks: FallbackValue[] = [];
  if (doc.errors.length > 0 || structure.brokenAliases) return { doc, lineCounter, problems, fallbacks };
  problems.push(...interpolateDocument(doc, env, lenient, fallbacks));
  try {
    const value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
    if (lenient !== undefined) removeUnset(value, lenient.found);
    return { doc, lineCounter, problems, fallbacks, value };
  } catch (error) {
    const message =
      error instanceof ReferenceError && error.message.startsWith('Excessive alias count')
        ? `aliases expand to too much data (limit ${MAX_ALIAS_COUNT} expansions)`
        : `cannot build the document: ${error instanceof Error ? error.message : String(error)}`;
    problems.push({ path: [], offset: structure.firstAlias ?? 0, message });
    return { doc, lineCounter, problems, fallbacks };
  }
}

function isRefusedTag(e: YAMLError): boolean {
  const tag = /^Unresolved tag: (\S+)/.exec(e.message)?.[1];
  return e.code === 'TAG_RESOLVE_FAILED' && tag !== undefined && !ALLOWED_TAGS.has(tag);
}

/** Errors about a well-formed node; the others are syntax errors, where the document's structure is a guess. */
const NODE_ERRORS = new Set(['DUPLICATE_KEY', 'NON_STRING_KEY', 'KEY_OVER_1024_CHARS', 'TAG_RESOLVE_FAILED', 'BAD_COLLECTION_TYPE']);

function yamlProblem(doc: Document, lineCounter: LineCounter, e: YAMLError): LocatedProblem {
  const offset = e.pos[0];
  const column = offset >= 0 ? lineCounter.linePos(offset).col : undefined;
  const text = e.message.split('\n', 1)[0] ?? e.code;
  const known = NODE_ERRORS.has(e.code);
  const message = `${FRIENDLY[e.code] ?? (known ? text : `YAML syntax error: ${text}`)}${column === undefined ? '' : ` (column ${column})`}`;
  return { path: known ? pathAtOffset(doc, offset) : [], offset, message };
}

/** Duplicate keys, custom tags, merge keys, and aliases that point nowhere or into themselves. */
function structureProblems(doc: Document): { problems: LocatedProblem[]; brokenAliases: boolean; firstAlias?: number } {
  const problems: LocatedProblem[] = [];
  const anchors = new Map<string, unknown>();
  let brokenAliases = false;
  let firstAlias: number | undefined;
  const add = (ancestry: readonly unknown[], node: unknown, message: string) =>
    problems.push({ path: pathOfAncestry(ancestry, node), offset: (node as Node).range?.[0] ?? 0, message });
  yaml().visit(doc, {
    Pair(_key, pair, ancestry) {
      if (keyText(pair) !== '<<') return;
      const path = [...pathOfAncestry(ancestry, pair), '<<'];
      problems.push({
        path,
        offset: (pair.key as Node).range?.[0] ?? 0,
        message: 'merge keys (<<) are not supported; write the keys out in full',
      });
    },
    Node(_key, node, ancestry) {
      if (yaml().isAlias(node)) {
        firstAlias ??= node.range?.[0];
        const target = anchors.get(node.source);
        const problem =
          target === undefined
            ? `alias *${node.source} has no anchor &${node.source} before it`
            : ancestry.includes(target as Node)
              ? `alias *${node.source} refers to a node that contains it`
              : undefined;
        if (problem !== undefined) {
          brokenAliases = true;
          add(ancestry, node, problem);
        }
        return;
      }
      if (node.anchor !== undefined) anchors.set(node.anchor, node);
      if (yaml().isMap(node)) {
        const seen = new Set<string>();
        for (const pair of node.items) {
          if (seen.size === seen.add(keyText(pair)).size) {
            problems.push({
              path: [...pathOfAncestry(ancestry, node), keyText(pair)],
              offset: (pair.key as Node).range?.[0] ?? 0,
              message: 'duplicate key',
            });
          }
        }
      }
      if (node.tag !== undefined && !ALLOWED_TAGS.has(node.tag)) {
        add(ancestry, node, `tag ${shortTag(node.tag)} is not allowed; a config file holds plain YAML values only`);
      }
    },
  });
  return firstAlias === undefined ? { problems, brokenAliases } : { problems, brokenAliases, firstAlias };
}

function shortTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice('tag:yaml.org,2002:'.length)}` : tag;
}
