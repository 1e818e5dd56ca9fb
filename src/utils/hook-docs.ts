/** What an `onRequest` hook tells the OpenAPI document about the routes it guards. */
export interface HookDocs {
  /** It requires a bearer token (`Authorization: Bearer`): the operation's `security`, and its 401. */
  readonly bearer: true;
}

const DOCS = Symbol('flotilla.hookDocs');

/**
 * Marks `hook` with what the document should say of the routes it guards (`jwtAuth` marks its
 * hook as a bearer check). Returns the hook itself.
 *
 * @example
 * return documentHook(hook, { bearer: true });
 */
export function documentHook<H extends object>(hook: H, docs: HookDocs): H {
  Object.defineProperty(hook, DOCS, { value: docs });
  return hook;
}

/**
 * What the hooks of a route's chain (the App's, its groups', its own) tell the document, read when
 * the document is built: a hook added to a group after its routes still counts.
 *
 * @example
 * hookDocsOf(entry.hooks); // [{ bearer: true }] under a jwtAuth hook
 */
export function hookDocsOf(chain: readonly (readonly object[])[]): HookDocs[] {
  const docs: HookDocs[] = [];
  for (const hooks of chain) for (const hook of hooks) if (DOCS in hook) docs.push((hook as { [DOCS]: HookDocs })[DOCS]);
  return docs;
}
