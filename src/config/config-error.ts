/** One problem found in a configuration. */
export interface ConfigProblem {
  /** Dotted key, e.g. `docs.servers[0]`; empty for the top level. */
  key: string;
  /** The same key as path segments, e.g. `['docs', 'servers', 0]`. */
  path: readonly (string | number)[];
  message: string;
  /** Set when the config came from a file. */
  file?: string;
  line?: number;
}

/**
 * Thrown when a configuration is invalid; lists every problem at once.
 *
 * @example
 * try { new App({ port: -1 }) } catch (e) { if (e instanceof ConfigError) console.error(e.problems) }
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly problems: readonly ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${formatProblem(p)}`).join('\n')}`);
    this.problems = problems;
  }
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.file === undefined ? '' : `${p.file}${p.line === undefined ? '' : `:${p.line}`}: `;
  return `${where}${p.key === '' ? '(top level)' : p.key}: ${p.message}`;
}

export function keyOf(path: readonly (string | number)[]): string {
  return path.reduce<string>((k, s) => (typeof s === 'number' ? `${k}[${s}]` : k === '' ? s : `${k}.${s}`), '');
}
