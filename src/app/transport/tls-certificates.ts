import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError } from '../../config/config-error.ts';
import { tlsExpiryGauge } from '../../metrics/tls-metrics.ts';
import { TlsFileError, type TlsFiles, type TlsMaterial } from '../../utils/tls-files.ts';
import { type TlsPolicy, tlsPolicyProblem } from '../../utils/tls-policy.ts';
import { TlsFileWatch, type TlsReading } from '../../utils/tls-watch.ts';
import type { Front } from './front.ts';

/**
 * An App's certificate pair (`tls`): read when it starts listening, then either watched by the App
 * itself (standalone: the files are polled, and the expiry gauge is in its registry) or handed over
 * by whoever watches them (a cluster worker: its primary, see src/primary/tls-rotation.ts, calls
 * `use`). A new pair goes to the server with `setSecureContext`: new handshakes use it, the
 * connections open keep theirs, and the versions and suites of `tls` (`minVersion`, `ciphers`) stay
 * (src/app/transport/front.ts builds each secure context with them). A pair that cannot serve is
 * refused with an error line naming the file, and the previous one stays.
 *
 * @example
 * const tls = new TlsCertificates(config.tls, logger, { watch: true, registry });
 */
export class TlsCertificates {
  readonly #files: TlsFiles & TlsPolicy;
  readonly #logger: Logger;
  readonly #watches: boolean;
  #watch: TlsFileWatch | undefined;
  #front: Front | undefined;
  /** A pair handed over (`use`) replaces the files' first reading. */
  #handed: TlsMaterial | undefined;

  constructor(files: TlsFiles & TlsPolicy, logger: Logger, { watch, registry }: { watch: boolean; registry?: Registry | undefined }) {
    this.#files = files;
    this.#logger = logger;
    this.#watches = watch;
    if (registry !== undefined) tlsExpiryGauge(registry, () => this.#watch?.expiry ?? []);
  }

  /**
   * The pair the server starts with; throws a `ConfigError` naming the `tls` key whose file cannot
   * serve, or `tls.ciphers` when OpenSSL cannot serve it (a loaded config file was checked already).
   */
  material(): TlsMaterial {
    const policy = tlsPolicyProblem(this.#files);
    if (policy !== undefined) throw new ConfigError([{ key: 'tls.ciphers', path: ['tls', 'ciphers'], message: policy }]);
    if (this.#handed !== undefined) return this.#handed;
    try {
      this.#watch ??= new TlsFileWatch(this.#files, (reading) => this.#read(reading));
    } catch (error) {
      if (!(error instanceof TlsFileError)) throw error;
      throw new ConfigError([{ key: `tls.${error.key}`, path: ['tls', error.key], message: error.message }]);
    }
    return this.#watch.material;
  }

  attach(front: Front): void {
    this.#front = front;
    if (this.#watches) this.#watch?.watch();
  }

  /** Reads the files again now (what a change of them does); false when the pair was refused. */
  reload(): boolean {
    return this.#watch?.reload().ok ?? false;
  }

  /** A pair read and checked elsewhere (a cluster's primary): new handshakes use it. False when the server refused it. */
  use(material: TlsMaterial): boolean {
    if (this.#front === undefined) {
      this.#handed = material;
      return true;
    }
    return this.#apply(material);
  }

  close(): void {
    this.#watch?.close();
  }

  #read(reading: TlsReading): void {
    if (!reading.ok) {
      const { error } = reading;
      this.#logger.error(
        { key: `tls.${error.key}`, file: error.file },
        `TLS certificate reload refused: ${error.message}; the previous certificate stays in use`,
      );
      return;
    }
    if (reading.changed) this.#apply(reading.material);
  }

  #apply(material: TlsMaterial): boolean {
    try {
      this.#front?.setSecureContext(material);
    } catch (error) {
      this.#logger.error(
        { err: error, file: this.#files.certFile },
        'TLS certificate refused by the server; the previous certificate stays in use',
      );
      return false;
    }
    this.#logger.info({ file: this.#files.certFile }, 'TLS certificate reloaded: new handshakes use it');
    return true;
  }
}
