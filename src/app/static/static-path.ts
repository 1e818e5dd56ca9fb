/**
 * A request's path below a static mount, checked: the segments of a file (or of a directory, when
 * the path ends with `/`) inside the mount's directory.
 */
export interface StaticPath {
  /** The decoded segments: names, none empty, `.` or `..`, none with a `\` or a NUL (see {@link staticPath}). */
  readonly segments: readonly string[];
  /** The path ended with `/`: it names a directory (its index file is meant). */
  readonly directory: boolean;
}

/**
 * Checks the part of a request path below a static mount, as the router matched it (find-my-way's
 * wildcard: percent-decoded once). `undefined` refuses it, whatever it would name on disk:
 * - a `.` or `..` segment, however it was written (`..%2f`, `%2e%2e/`, `%2E%2e`: decoded already);
 * - a backslash (`..\`, `%5c`): a separator on Windows, never a character of a served name here;
 * - a NUL (`%00`), which the file system would cut the name at;
 * - an empty segment (`//etc/passwd`, `a//b`) other than the final one of a directory;
 * - a dotfile or a dot-directory (`.env`, `.git/config`) unless `dotfiles` is `allow`;
 * - a segment that another decoding (`%252e%252e` arrives as `%2e%2e`), or Unicode's compatibility
 *   normalization (`．．`, fullwidth dots), would turn into any of the above: no file is named so,
 *   and a layer below (a proxy, a file system) that decodes or normalizes again must not see `..`.
 *
 * What is left names something inside the directory by construction; symbolic links are checked
 * apart (`send-file.ts`), on the real path of what was found.
 *
 * @example
 * staticPath('css/site.css', 'deny');   // { segments: ['css', 'site.css'], directory: false }
 * staticPath('docs/', 'deny');          // { segments: ['docs'], directory: true }
 * staticPath('../etc/passwd', 'deny');  // undefined
 */
export function staticPath(wildcard: string, dotfiles: 'allow' | 'deny'): StaticPath | undefined {
  // the mount's root itself (`/assets/`)
  if (wildcard === '') return { segments: [], directory: true };
  const directory = wildcard.endsWith('/');
  const segments = (directory ? wildcard.slice(0, -1) : wildcard).split('/');
  for (const segment of segments) {
    if (segment === '' || !plainName(segment, dotfiles)) return undefined;
  }
  return { segments, directory };
}

/** Decodings of a segment looked through (`%25252e` is `.` after three). */
const MAX_DECODINGS = 4;
/** Outside printable ASCII: where NFKC may fold a character into a dot, a slash or a backslash. */
const BEYOND_ASCII = /[^ -~]/;
const ENCODED_BYTE = /%[0-9a-f]{2}/i;

/** Whether a segment is a name, as it is and as any further decoding or normalization would read it. */
function plainName(segment: string, dotfiles: 'allow' | 'deny'): boolean {
  let name = segment;
  for (let i = 0; i <= MAX_DECODINGS; i++) {
    if (!safe(name, dotfiles) || (BEYOND_ASCII.test(name) && !safe(name.normalize('NFKC'), dotfiles))) return false;
    if (!name.includes('%')) return true;
    let decoded: string;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // a literal `%` (`100%.txt`) is a name; bytes that are no UTF-8 (`%c0%ae`, overlong `.`) are refused
      return !ENCODED_BYTE.test(name);
    }
    if (decoded === name) return true;
    name = decoded;
  }
  return false;
}

function safe(name: string, dotfiles: 'allow' | 'deny'): boolean {
  if (name === '.' || name === '..' || name.includes('/') || name.includes('\\') || name.includes('\0')) return false;
  return dotfiles === 'allow' || !name.startsWith('.');
}

/**
 * The segments percent-encoded again, joined: what `@fastify/send` takes (it decodes its path once
 * more), so that it opens exactly the checked name (`100%.txt`, not a failed decoding).
 *
 * @example
 * encodedPath(['a b', '100%.txt']); // '/a%20b/100%25.txt'
 */
export function encodedPath(segments: readonly string[]): string {
  let path = '';
  for (const segment of segments) path += `/${encodeURIComponent(segment)}`;
  return path;
}
