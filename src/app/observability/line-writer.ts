import fs from 'node:fs';

/** Linux's PIPE_BUF: a write(2) of at most this many bytes to a pipe is never interleaved with another writer's. */
export const PIPE_BUF = 4096;
/** The largest batch written to a file or a terminal, where no other writer can cut into a write. */
export const FILE_BATCH_BYTES = 65_536;
/** A pending line is written at most this long after it was logged. */
export const FLUSH_MS = 100;

/** Writers with lines not yet written: flushed synchronously when the process exits. */
const pendingWriters = new Set<LineWriter>();
let exitHooked = false;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * The destination pino writes to: log lines batched into few write(2) calls on
 * a file descriptor (stdout by default), each of them whole lines only.
 *
 * Every worker of a cluster inherits the same stdout, and in a container that
 * is one pipe (or a socket) read by the log collector. The kernel keeps a
 * write to a pipe in one piece only up to PIPE_BUF (4096 bytes); a longer one
 * may be split when the pipe fills up, and another worker's write lands in the
 * gap, in the middle of a line. So on a pipe or a socket each write is at most
 * PIPE_BUF bytes of whole lines, and lines from several workers are
 * interleaved only at line boundaries. On a file (appends) or a terminal,
 * where nothing cuts into a write, batches go up to 64 KiB.
 *
 * Batching is what keeps logging cheap: one write per line cost a busy worker
 * as much as the response's own socket write. A batch is written when the
 * next line would not fit in it, at most 100 ms after its first line (an
 * unref'd timer, which never keeps the process alive), on `flushSync()` (pino
 * calls it after every `fatal` line) and synchronously when the process exits,
 * so a graceful exit, `process.exit()` included, loses no line.
 *
 * Writes are synchronous (`fs.writeSync`): a write never races a later one,
 * so exiting mid-batch can neither reorder nor repeat lines. A write that
 * stopped part-way goes on from where it stopped. When the descriptor is
 * non-blocking and full (EAGAIN), the writer waits and retries, exactly as a
 * blocking pipe would make it wait: a stalled reader slows the process down
 * instead of growing its memory. When the reader is gone (EPIPE), lines are
 * dropped from then on.
 *
 * A single line longer than PIPE_BUF on a pipe or a socket is shortened into
 * a still valid JSON line with `"truncated":true`: its longest string values
 * (a stack trace, a big field) are cut, ending with `…`, until it fits, so
 * `level`, `time`, `msg` and the short fields stay. Written whole, it could
 * be split by another worker's line and turn two lines into garbage; the
 * point of this writer is that every line a collector reads is whole JSON.
 * On a file or a terminal a long line is written whole, on its own.
 */
export class LineWriter {
  readonly fd: number;
  /** The largest write(2) this writer issues: PIPE_BUF on a pipe or a socket, 64 KiB otherwise. */
  readonly maxWriteBytes: number;
  /** Whether the descriptor is shared by writers the kernel may interleave: a pipe (FIFO) or a socket. */
  readonly shared: boolean;
  #pending = '';
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #dropped = false;

  constructor(fd = 1) {
    this.fd = fd;
    this.shared = isShared(fd);
    this.maxWriteBytes = this.shared ? PIPE_BUF : FILE_BATCH_BYTES;
    if (!exitHooked) {
      exitHooked = true;
      process.on('exit', flushPendingWriters);
    }
  }

  /** Takes one line, ending with `\n`, as pino writes them. */
  write(line: string): boolean {
    if (this.#dropped) return true;
    let bytes = Buffer.byteLength(line);
    if (bytes > this.maxWriteBytes) {
      if (!this.shared) {
        this.flushSync();
        if (!this.#dropped) this.#writeOut(line, bytes);
        return true;
      }
      line = truncateLine(line, this.maxWriteBytes);
      bytes = Buffer.byteLength(line);
    }
    if (this.#pendingBytes + bytes > this.maxWriteBytes) {
      this.flushSync();
      if (this.#dropped) return true;
    }
    this.#pending += line;
    this.#pendingBytes += bytes;
    if (this.#pendingBytes === bytes) {
      pendingWriters.add(this);
      this.#timer ??= setTimeout(this.#onTimer, FLUSH_MS).unref();
    }
    return true;
  }

  /** Writes every pending line now. */
  flushSync(): void {
    if (this.#pendingBytes === 0) return;
    const batch = this.#pending;
    const bytes = this.#pendingBytes;
    this.#pending = '';
    this.#pendingBytes = 0;
    pendingWriters.delete(this);
    this.#writeOut(batch, bytes);
  }

  /** pino's `logger.flush(cb)`: writes every pending line, then calls back. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  /** Writes every pending line and stops the timer; later lines are still written. */
  end(): void {
    this.flushSync();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.flushSync();
  };

  /** Writes `data` (`bytes` long in UTF-8) completely: after a partial write, from where it stopped; after EAGAIN, once the reader made room. */
  #writeOut(data: string, bytes: number): void {
    let buffer: Buffer | undefined;
    let written = 0;
    let waitMs = 1;
    while (written < bytes) {
      try {
        written += buffer === undefined ? fs.writeSync(this.fd, data) : fs.writeSync(this.fd, buffer, written, bytes - written);
        if (written < bytes) buffer ??= Buffer.from(data);
        waitMs = 1;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EINTR') {
          Atomics.wait(sleeper, 0, 0, waitMs);
          waitMs = Math.min(waitMs * 2, 50);
          continue;
        }
        this.#drop(code ?? String(error));
        return;
      }
    }
  }

  /** The descriptor is unusable (EPIPE: nobody reads it any more): lines are dropped from now on. */
  #drop(code: string): void {
    this.#dropped = true;
    this.#pending = '';
    this.#pendingBytes = 0;
    pendingWriters.delete(this);
    clearTimeout(this.#timer);
    if (code === 'EPIPE') return;
    try {
      fs.writeSync(2, `flotilla: log lines to fd ${this.fd} are dropped from now on: ${code}\n`);
    } catch {
      // stderr is gone too
    }
  }
}

function flushPendingWriters(): void {
  for (const writer of pendingWriters) writer.flushSync();
}

function isShared(fd: number): boolean {
  try {
    const stat = fs.fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return true; // unknown: the safe assumption
  }
}

/** Fields never cut when a line is shortened. */
const KEPT = new Set(['level', 'time']);

/**
 * `line` (one JSON line, ending with `\n`) shortened to at most `maxBytes`
 * bytes, still one valid JSON object with `"truncated":true`: every string
 * value longer than some length is cut to it and ends with `…`, the length
 * chosen as large as fits. When even cutting every string does not make it
 * fit (a huge array of numbers, thousands of keys), only the top-level fields
 * that are not objects are kept; and as a last resort `level`, `time` and
 * `msg`. A line that is not a JSON object becomes `{"msg": <its text>}` first.
 */
export function truncateLine(line: string, maxBytes: number): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = undefined;
  }
  const object: Record<string, unknown> = isObject(value) ? value : { msg: line.replace(/\n$/, '') };
  const primitives: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) if (typeof v !== 'object' || v === null) primitives[key] = v;
  const core = { level: object['level'], time: object['time'], msg: typeof object['msg'] === 'string' ? object['msg'] : '' };
  for (const candidate of [object, primitives, core]) {
    const fitted = fitStrings(candidate, maxBytes);
    if (fitted !== undefined) return fitted;
  }
  return `${JSON.stringify({ truncated: true })}\n`;
}

/** `object` with its strings cut to the largest common length that fits in `maxBytes`; undefined when none does. */
function fitStrings(object: Record<string, unknown>, maxBytes: number): string | undefined {
  const render = (cap: number) => `${JSON.stringify({ ...(capStrings(object, cap) as object), truncated: true })}\n`;
  const fits = (cap: number) => Buffer.byteLength(render(cap)) <= maxBytes;
  if (!fits(0)) return undefined;
  let lo = 0; // fits
  let hi = longestString(object); // the largest cap worth trying
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return render(lo);
}

function capStrings(value: unknown, cap: number, key = ''): unknown {
  if (typeof value === 'string') return value.length > cap && !KEPT.has(key) ? cut(value, cap) : value;
  if (Array.isArray(value)) return value.map((v) => capStrings(v, cap));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = capStrings(v, cap, k);
    return out;
  }
  return value;
}

/** The first `cap` characters of `text` (never half a surrogate pair), then `…`. */
function cut(text: string, cap: number): string {
  let end = cap;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return 0;
  let longest = 0;
  for (const v of Object.values(value)) longest = Math.max(longest, longestString(v));
  return longest;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
