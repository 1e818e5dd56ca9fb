import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createError } from '../../errors/flotilla-error.ts';
import { isRecord } from '../../utils/is-record.ts';
import type { Encoding } from '../compression/negotiate.ts';
import { RootGuard } from './root-guard.ts';
import { staticPath } from './static-path.ts';

/**
 * What `app.serveStatic(prefix, dir, options)` takes. Every option is optional; an unknown one is
 * refused at registration.
 *
 * @example
 * app.serveStatic('/assets', 'dist/assets', { immutable: /\.[0-9a-f]{8,}\.\w+$/ });
 * app.serveStatic('/', 'dist', { spaFallback: 'index.html', maxAgeS: 60 });
 */
export interface StaticOptions {
  /**
   * `Cache-Control: public, max-age=<maxAgeS>` on every file (default 0: caches keep the file and
   * ask again each time, answered 304 while its `ETag` and `Last-Modified` still hold). At most one year.
   */
  maxAgeS?: number;
  /**
   * Files whose name changes with their content (hashed names, `app.3f9a1c2e.js`), cached a year
   * without asking again: `Cache-Control: public, max-age=31536000, immutable`. `true`: every file; a
   * RegExp or a predicate: tested on the file's path below the mount (`js/app.3f9a1c2e.js`). Default `false`.
   */
  immutable?: boolean | RegExp | ((path: string) => boolean);
  /** `false`: no `Cache-Control` at all (a hook or a middleware sets its own); default `true`. */
  cacheControl?: boolean;
  /** The file served for a directory (`/docs/` → `docs/index.html`); `false`: none, a directory is a 404. Default `index.html`. */
  index?: string | false;
  /**
   * A file below `dir` served, `Cache-Control: no-cache`, for a path that names no file when the
   * request accepts `text/html` (a browser navigating a single-page application's client-side
   * routes); a request for a script or an image that is not there is still a 404. Default: none.
   */
  spaFallback?: string | false;
  /**
   * Serve `<file>.br`, `<file>.zst` or `<file>.gz` in place of `<file>` when it exists and the request's
   * `Accept-Encoding` takes it, with `Content-Encoding` and `Vary: Accept-Encoding`. `true` (the default):
   * all three, Brotli first; a list: those, in that order of preference; `false`: never.
   */
  precompressed?: boolean | readonly Encoding[];
  /** `deny` (the default): a path with a segment starting with `.` (`.env`, `.git/`) is a 404; `allow`: served. */
  dotfiles?: 'deny' | 'allow';
}

/** A static mount, checked once at registration and frozen. */
export interface StaticMount {
  /** The URL prefix without its trailing slash: `/assets`, or `''` for the root. */
  readonly prefix: string;
  /** The directory, absolute. */
  readonly root: string;
  /** Its real path (symbolic links resolved): what every file's real path must be inside. */
  readonly realRoot: string;
  /** Checks that a file's real path is inside `realRoot`. */
  readonly guard: RootGuard;
  readonly cacheControl: boolean;
  readonly maxAgeS: number;
  readonly immutable: (path: string) => boolean;
  readonly index: string | undefined;
  /** The fallback's segments below the root; undefined: none. */
  readonly spaFallback: readonly string[] | undefined;
  /** The precompressed siblings looked for, in order of preference. */
  readonly encodings: readonly Encoding[];
  readonly dotfiles: 'deny' | 'allow';
}

const KEYS = new Set(['maxAgeS', 'immutable', 'cacheControl', 'index', 'spaFallback', 'precompressed', 'dotfiles']);
const ENCODINGS: readonly Encoding[] = Object.freeze(['br', 'zstd', 'gzip']);
const YEAR_S = 31_536_000;
/** Characters find-my-way reads as syntax (`:param`, `*`, regexps), or that no prefix needs. */
const BAD_PREFIX = /[:*?#()\\\s]|\/\/|\/\.\.?(?:\/|$)/;

/**
 * Checks `serveStatic`'s arguments and resolves the mount: a prefix that is a plain path, a
 * directory that exists (resolved from the current directory), options of the right types.
 * Throws `FLO_ERR_BAD_STATIC_OPTION` or `FLO_ERR_STATIC_DIRECTORY`.
 *
 * @example
 * const mount = staticMount('/assets', 'dist/assets', { maxAgeS: 3600 });
 */
export function staticMount(prefix: string, dir: string, options: StaticOptions | undefined): StaticMount {
  // checked as values too: a JavaScript caller (or a config read at run time) passes anything
  const shown = String(prefix);
  const bad = (reason: string) => createError('FLO_ERR_BAD_STATIC_OPTION', { prefix: shown, reason });
  if (typeof prefix !== 'string' || !prefix.startsWith('/') || BAD_PREFIX.test(prefix)) {
    throw bad("the prefix must be a path starting with '/', without parameters, wildcards, '.' or '..' segments");
  }
  if (typeof dir !== 'string' || dir === '') throw bad('the directory must be a non-empty string');
  if (options !== undefined && !isRecord(options)) throw bad('the options must be an object');
  const o = (options ?? {}) as StaticOptions & Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) throw bad(`unknown option '${key}'`);
  const root = resolve(dir);
  const realRoot = realDirectory(shown, root);
  const maxAgeS = o.maxAgeS ?? 0;
  if (!Number.isInteger(maxAgeS) || maxAgeS < 0 || maxAgeS > YEAR_S) throw bad(`maxAgeS must be an integer of seconds in 0..${YEAR_S}`);
  if (o.cacheControl !== undefined && typeof o.cacheControl !== 'boolean') throw bad('cacheControl must be a boolean');
  const index = o.index === undefined ? 'index.html' : o.index;
  if (index !== false && (typeof index !== 'string' || staticPath(index, 'allow')?.segments.length !== 1)) {
    throw bad('index must be a file name (or false)');
  }
  const spaFallback = fallbackOf(o.spaFallback, realRoot, bad);
  const dotfiles = o.dotfiles ?? 'deny';
  if (dotfiles !== 'deny' && dotfiles !== 'allow') throw bad("dotfiles must be 'deny' or 'allow'");
  return Object.freeze({
    prefix: prefix.endsWith('/') ? prefix.slice(0, -1) : prefix,
    root,
    realRoot,
    guard: new RootGuard(realRoot),
    cacheControl: o.cacheControl ?? true,
    maxAgeS,
    immutable: immutableTest(o.immutable, bad),
    index: index === false ? undefined : index,
    spaFallback,
    encodings: encodingsOf(o.precompressed, bad),
    dotfiles,
  });
}

/**
 * The `Cache-Control` of a file of the mount (`path`: below the mount, `/`-separated), or
 * `undefined` for none.
 *
 * @example
 * cacheControlOf(mount, 'js/app.3f9a1c2e.js'); // 'public, max-age=31536000, immutable' (with `immutable` matching it)
 */
export function cacheControlOf(mount: StaticMount, path: string): string | undefined {
  if (!mount.cacheControl) return undefined;
  if (mount.immutable(path)) return `public, max-age=${YEAR_S}, immutable`;
  return `public, max-age=${mount.maxAgeS}`;
}

function realDirectory(prefix: string, root: string): string {
  let real: string;
  try {
    real = realpathSync(root);
  } catch (error) {
    throw createError('FLO_ERR_STATIC_DIRECTORY', { prefix, dir: root, reason: (error as Error).message }, { cause: error });
  }
  if (!statSync(real).isDirectory()) throw createError('FLO_ERR_STATIC_DIRECTORY', { prefix, dir: root, reason: 'not a directory' });
  return real;
}

function fallbackOf(value: unknown, realRoot: string, bad: (reason: string) => Error): readonly string[] | undefined {
  if (value === undefined || value === false) return undefined;
  const path = typeof value === 'string' ? staticPath(value, 'allow') : undefined;
  if (path === undefined || path.directory) throw bad('spaFallback must be the path of a file below the directory (or false)');
  const file = resolve(realRoot, ...path.segments);
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {}
  if (!isFile) throw bad(`spaFallback '${String(value)}' is not a file of the directory`);
  return Object.freeze([...path.segments]);
}

function immutableTest(value: unknown, bad: (reason: string) => Error): (path: string) => boolean {
  if (value === undefined || value === false) return () => false;
  if (value === true) return () => true;
  if (value instanceof RegExp) {
    // a copy without state: a global or sticky RegExp would remember where it last matched
    const re = new RegExp(value.source, value.flags.replace(/[gy]/g, ''));
    return (path) => re.test(path);
  }
  if (typeof value === 'function') return (path) => (value as (p: string) => unknown)(path) === true;
  throw bad('immutable must be a boolean, a RegExp or a function');
}

function encodingsOf(value: unknown, bad: (reason: string) => Error): readonly Encoding[] {
  if (value === undefined || value === true) return ENCODINGS;
  if (value === false) return Object.freeze([]);
  if (!Array.isArray(value) || value.some((e) => !ENCODINGS.includes(e)) || new Set(value).size !== value.length) {
    throw bad("precompressed must be a boolean or a list of distinct encodings among 'br', 'zstd', 'gzip'");
  }
  return Object.freeze([...value]);
}
