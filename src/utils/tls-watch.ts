import { type Stats, type StatWatcher, unwatchFile, watchFile } from 'node:fs';
import { readTlsFiles, type TlsExpiry, TlsFileError, type TlsFiles, type TlsMaterial } from './tls-files.ts';

/** How often the files are looked at (a `stat` each). */
export const TLS_POLL_MS = 1_000;
/** A change is read once the files stayed the same this long: a certificate and its key written one after the other count once. */
export const TLS_SETTLE_MS = 300;

/** What became of a reading of the files. */
export type TlsReading =
  | { readonly ok: true; readonly material: TlsMaterial; readonly expiry: readonly TlsExpiry[]; readonly changed: boolean }
  | { readonly ok: false; readonly error: TlsFileError };

/**
 * The certificate pair of `tls`, read from its files and read again when asked (`reload`, SIGHUP) or
 * when one of them changes. The files are polled with `stat` (fs.watchFile) rather than watched with
 * inotify: a Kubernetes secret volume swaps a symlink to a new directory, which an inotify watch on the
 * old file never sees, while `stat` follows the link. A reading that fails keeps the previous pair;
 * `onReading` hears of every reading, and the caller logs and applies it.
 *
 * @example
 * const certs = new TlsFileWatch(files, (reading) => (reading.ok ? front.setSecureContext(reading.material) : log(reading.error)));
 * certs.watch();
 */
export class TlsFileWatch {
  readonly #files: TlsFiles;
  readonly #onReading: (reading: TlsReading) => void;
  #current: { material: TlsMaterial; expiry: readonly TlsExpiry[] };
  #watched: { path: string; listener: (curr: Stats, prev: Stats) => void }[] = [];
  #settle: NodeJS.Timeout | undefined;

  /** Reads the files once: throws the {@link TlsFileError} of a pair that cannot serve. */
  constructor(files: TlsFiles, onReading: (reading: TlsReading) => void) {
    this.#files = files;
    this.#onReading = onReading;
    this.#current = readTlsFiles(files);
  }

  /** The pair in use: the last one read that could serve. */
  get material(): TlsMaterial {
    return this.#current.material;
  }

  /** When the certificates in use expire. */
  get expiry(): readonly TlsExpiry[] {
    return this.#current.expiry;
  }

  /** Reads the files again; a pair that cannot serve is refused and the previous one stays. */
  reload(): TlsReading {
    let reading: TlsReading;
    try {
      const next = readTlsFiles(this.#files);
      const before = this.#current.material;
      const changed = next.material.cert !== before.cert || next.material.key !== before.key || next.material.ca !== before.ca;
      this.#current = next;
      reading = { ok: true, ...next, changed };
    } catch (error) {
      if (!(error instanceof TlsFileError)) throw error;
      reading = { ok: false, error };
    }
    this.#onReading(reading);
    return reading;
  }

  /** Polls the files; a change is read once they settle (see {@link TLS_SETTLE_MS}). */
  watch(pollMs = TLS_POLL_MS): void {
    if (this.#watched.length > 0) return;
    const { certFile, keyFile, caFile } = this.#files;
    for (const path of caFile === undefined ? [certFile, keyFile] : [certFile, keyFile, caFile]) {
      const listener = (curr: Stats, prev: Stats) => {
        if (curr.mtimeMs === prev.mtimeMs && curr.ino === prev.ino && curr.size === prev.size) return;
        clearTimeout(this.#settle);
        this.#settle = setTimeout(() => this.reload(), TLS_SETTLE_MS);
        this.#settle.unref();
      };
      const watcher: StatWatcher = watchFile(path, { interval: pollMs, persistent: false }, listener);
      watcher.unref();
      this.#watched.push({ path, listener });
    }
  }

  /** Stops polling. */
  close(): void {
    clearTimeout(this.#settle);
    for (const { path, listener } of this.#watched) unwatchFile(path, listener);
    this.#watched = [];
  }
}
