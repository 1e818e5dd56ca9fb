import { ReadStream, type Stats } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { Encoding } from '../compression/negotiate.ts';
import { SIBLING_SUFFIX, siblingsFor } from './precompressed.ts';
import type { RootGuard } from './root-guard.ts';
import type { StaticMount } from './static-options.ts';
import { encodedPath } from './static-path.ts';

type Send = typeof import('@fastify/send');

/** What sending one file of a mount came to. */
export type FileOutcome =
  /**
   * 200 or 206: the head's fields (`Content-Length`, `ETag`, `Last-Modified`, `Accept-Ranges`,
   * `Content-Range`) and the body: read whole when it fits in one read (see {@link BUFFERED_MAX}), a
   * stream otherwise (and for a HEAD, an empty one).
   */
  | {
      kind: 'file';
      status: number;
      headers: Record<string, string | number>;
      type: string;
      body: Buffer | Readable;
      encoding: Encoding | undefined;
    }
  /** A conditional request the file still matches: 304 with these fields. */
  | { kind: 'not-modified'; headers: Record<string, string | number>; encoding: Encoding | undefined }
  /** A `Range` outside the file: 416 with this `Content-Range` (`bytes *` then `/` and the size). */
  | { kind: 'unsatisfiable'; contentRange: string }
  /** `If-Match` or `If-Unmodified-Since` that the file fails: 412. */
  | { kind: 'precondition-failed' }
  /** A directory: its index is meant. */
  | { kind: 'directory' }
  /** Nothing the mount may serve: no such file, not a regular file, unreadable. */
  | { kind: 'missing' }
  /** A symbolic link (the file or a directory on its way) whose target is outside the mount's directory. */
  | { kind: 'outside' };

let sendLib: Send | undefined;

/**
 * `@fastify/send`, required on first use (`app.serveStatic`): a service that serves no file never
 * loads it, nor its MIME table (ARCHITECTURE.md, "Start-up").
 */
export function loadSend(): Send {
  sendLib ??= createRequire(import.meta.url)('@fastify/send') as Send;
  return sendLib;
}

/** Thrown from `onFile` to stop `send` before it opens a file whose real path is outside the root. */
const OUTSIDE = Symbol('outside the root');
/** Thrown from `onFile` for what is not a regular file. */
const NOT_REGULAR = Symbol('not a regular file');

/**
 * Bodies up to this size are read whole and sent as one buffer: a file stream reads 64 KiB at a time,
 * so it would hold as much for them anyway, and a buffered reply skips the streaming machinery:
 * a 10 KB file cost an App pinned to one core about 300 µs of CPU per request streamed, 150 µs read
 * whole (the same machine as bench/results/static-files.md).
 * Larger bodies are streamed with backpressure.
 */
export const BUFFERED_MAX = 64 * 1024;

/** Errors of the file system that make a file absent for the client rather than a failure of the server's. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'EACCES', 'EPERM', 'ELOOP', 'EISDIR']);

/**
 * Sends a checked path of a mount (`segments`: see `staticPath`) with `@fastify/send`: a
 * precompressed sibling when the request takes one and it exists (see `siblingsFor`), else the file
 * itself. `send` answers the conditional requests (`ETag` from size and mtime, weak; `Last-Modified`;
 * 304 and 412) and `Range` (206, 416); a file is opened only once its real path is found to be
 * inside the mount's real root, which refuses symbolic links that leave it.
 *
 * @example
 * const outcome = await sendFile(ctx.req, mount, ['js', 'app.js']);
 */
export async function sendFile(req: IncomingMessage, mount: StaticMount, segments: readonly string[]): Promise<FileOutcome> {
  const send = loadSend();
  const path = encodedPath(segments);
  const name = segments.join('/');
  for (const encoding of siblingsFor(header(req, 'accept-encoding'), mount.encodings, name)) {
    const outcome = await sendOne(send, req, mount, path + SIBLING_SUFFIX[encoding], encoding, typeOf(send, name));
    // a sibling that is not there (or not servable) leaves the file itself; one that leads outside refuses the path
    if (outcome.kind !== 'missing' && outcome.kind !== 'directory') return outcome;
  }
  return sendOne(send, req, mount, path, undefined, undefined);
}

async function sendOne(
  send: Send,
  req: IncomingMessage,
  mount: StaticMount,
  path: string,
  encoding: Encoding | undefined,
  type: string | undefined,
): Promise<FileOutcome> {
  let result: Awaited<ReturnType<Send>>;
  try {
    result = await send(req, path, {
      root: mount.root,
      // the path was checked (static-path.ts); directories and caching are answered here
      dotfiles: 'allow',
      index: false,
      cacheControl: false,
      // a sibling's own type would be that of a compressed archive
      contentType: type === undefined,
      onFile: (file, stat) => checkFile(file, stat, mount.guard),
    });
  } catch (error) {
    if (error === OUTSIDE) return { kind: 'outside' };
    if (error === NOT_REGULAR) return { kind: 'missing' };
    // the file went away between send's stat and the real path's lookup
    if (ABSENT.has((error as NodeJS.ErrnoException | undefined)?.code ?? '')) return { kind: 'missing' };
    throw error;
  }
  const { statusCode: status, headers } = result;
  if (result.type === 'file') {
    if (status === 304) return { kind: 'not-modified', headers, encoding };
    // a file that cannot be opened or read (unreadable, gone since its stat) is not there for the client
    const body = result.stream instanceof ReadStream ? await bodyOf(result.stream, Number(headers['Content-Length'])) : result.stream;
    if (body === undefined) return { kind: 'missing' };
    const contentType = type ?? headers['Content-Type'] ?? 'application/octet-stream';
    delete headers['Content-Type'];
    return { kind: 'file', status, headers, type: contentType, body, encoding };
  }
  result.stream.destroy();
  if (result.type === 'directory') return { kind: 'directory' };
  if (status === 416) return { kind: 'unsatisfiable', contentRange: String(headers['Content-Range'] ?? 'bytes */0') };
  if (status === 412) return { kind: 'precondition-failed' };
  const code = (result.metadata.error as NodeJS.ErrnoException).code;
  // 400, 403 and 404: a path send refuses or cannot find; 500: what the file system said
  if (status < 500 || (code !== undefined && ABSENT.has(code))) return { kind: 'missing' };
  throw result.metadata.error;
}

/**
 * The body of a file's stream: its bytes when they are few (at most {@link BUFFERED_MAX}), else the
 * stream once the file is open; `undefined` when it cannot be opened or read for a reason of
 * {@link ABSENT}. Rejects on any other failure.
 */
function bodyOf(stream: ReadStream, length: number): Promise<Buffer | Readable | undefined> {
  const whole = length <= BUFFERED_MAX;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer | string) => chunks.push(Buffer.from(chunk));
    const onEnd = () => {
      stream.off('error', onError);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    };
    const onReady = () => {
      stream.off('error', onError);
      resolve(stream);
    };
    const onError = (error: NodeJS.ErrnoException) => {
      stream.off('ready', onReady).off('data', onData).off('end', onEnd);
      stream.destroy();
      if (ABSENT.has(error.code ?? '')) resolve(undefined);
      else reject(error);
    };
    stream.once('error', onError);
    if (whole) stream.on('data', onData).once('end', onEnd);
    else stream.once('ready', onReady);
  });
}

/**
 * Rejects with {@link NOT_REGULAR} for what is no regular file (a FIFO would hold a thread of the pool
 * until something writes to it; a device, a socket), and with {@link OUTSIDE} when the file's real
 * path leaves the root (a symbolic link on the way).
 */
async function checkFile(file: string, stat: Stats, guard: RootGuard): Promise<void> {
  if (!stat.isFile()) throw NOT_REGULAR;
  if (!(await guard.inside(file, stat))) throw OUTSIDE;
}

/** The media type of a file by its name, with `charset=utf-8` for text (as `send` writes it). */
function typeOf(send: Send, name: string): string {
  const type = send.mime.getType(name);
  if (type === null) return 'application/octet-stream';
  return send.isUtf8MimeType(type) ? `${type}; charset=utf-8` : type;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
