import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../config/types.ts';
import { msg } from '../ipc/protocol.ts';
import { tlsExpiryGauge } from '../metrics/tls-metrics.ts';
import type { TlsFiles } from '../utils/tls-files.ts';
import { TlsFileWatch, type TlsReading } from '../utils/tls-watch.ts';

/**
 * The cluster's certificate pair (`tls`), held by the primary: it polls the files, reads a changed
 * pair once, checks it, and hands it to every worker (`flotilla:certificates`), whose new handshakes
 * use it (`setSecureContext`; open connections keep theirs). A pair that cannot serve is refused
 * with one error line naming the file, and the workers keep the previous one. Each worker gets the
 * pair as it is forked too, so a worker started during a refused rotation serves the good pair.
 * SIGHUP reads the files at once (`reload`), before the rolling restart of the config's reload.
 * The expiry gauge is the primary's: exported once per cluster.
 *
 * @example
 * const rotation = new TlsRotation(config.tls, logger, registry, () => supervisor.liveWorkers);
 * rotation.start();
 */
export class TlsRotation {
  readonly #logger: Logger;
  readonly #workers: () => readonly Worker[];
  #files: TlsFiles;
  #watch: TlsFileWatch;

  /** Throws the `TlsFileError` of a pair that cannot serve (the config's loading checked it already). */
  constructor(files: TlsFiles, logger: Logger, registry: Registry, workers: () => readonly Worker[]) {
    this.#logger = logger.child({ component: 'tls' });
    this.#workers = workers;
    this.#files = files;
    this.#watch = new TlsFileWatch(files, (reading) => this.#read(reading));
    tlsExpiryGauge(registry, () => this.#watch.expiry);
  }

  /** Polls the files from now on. */
  start(): void {
    this.#watch.watch();
  }

  /** Reads the files now (SIGHUP); a changed pair goes to every worker. */
  reload(): void {
    this.#watch.reload();
  }

  /**
   * A reload adopted `config`: its files are watched from now on, their pair handed to the workers
   * (a pair that cannot serve is refused as a change would be: the previous one stays).
   */
  follow(config: ResolvedConfig): void {
    const files = config.tls;
    if (files === undefined || sameFiles(files, this.#files)) return;
    let next: TlsFileWatch;
    try {
      next = new TlsFileWatch(files, (reading) => this.#read(reading));
    } catch (error) {
      this.#logger.error({ err: error }, 'TLS files of the reloaded config refused; the workers keep the previous certificate');
      return;
    }
    this.#watch.close();
    this.#watch = next;
    this.#files = files;
    next.watch();
    this.#send(this.#workers());
  }

  /** A worker just forked: it starts with the pair in use. */
  forked(worker: Worker): void {
    this.#send([worker]);
  }

  close(): void {
    this.#watch.close();
  }

  #read(reading: TlsReading): void {
    if (!reading.ok) {
      const { error } = reading;
      this.#logger.error(
        { key: `tls.${error.key}`, file: error.file },
        `TLS certificate reload refused: ${error.message}; the workers keep the previous certificate`,
      );
      return;
    }
    if (!reading.changed) return;
    const workers = this.#workers();
    this.#send(workers);
    this.#logger.info(
      { file: this.#files.certFile, workers: workers.length },
      'TLS certificate reloaded: the workers use it for new handshakes',
    );
  }

  #send(workers: readonly Worker[]): void {
    const message = msg.certificates(this.#watch.material);
    for (const worker of workers) if (worker.isConnected()) worker.send(message);
  }
}

function sameFiles(a: TlsFiles, b: TlsFiles): boolean {
  return a.certFile === b.certFile && a.keyFile === b.keyFile && a.caFile === b.caFile;
}
