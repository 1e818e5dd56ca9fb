import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate the throwaway CA signed: its files, and the serial it was given (hex, upper case). */
export interface Issued {
  readonly cert: string;
  readonly key: string;
  readonly serial: string;
}

/**
 * A certificate authority made with `openssl` in `dir` for one test, and the certificates it issues:
 * P-256 keys, valid two days, a server's for `localhost` and `127.0.0.1`.
 *
 * @example
 * const ca = new ThrowawayCa(dir);
 * const server = ca.issue('server', 'localhost', 'serverAuth');
 */
export class ThrowawayCa {
  readonly dir: string;
  /** The CA's certificate (PEM file): what clients trust, and `tls.caFile` for client certificates. */
  readonly cert: string;
  readonly #key: string;
  #serial = 0x1000;

  constructor(dir: string) {
    this.dir = dir;
    this.cert = join(dir, 'ca.pem');
    this.#key = join(dir, 'ca.key');
    openssl(
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
        '-keyout',
        this.#key,
        '-out',
        this.cert,
        '-days',
        '2',
        '-subj',
        '/CN=flotilla throwaway CA',
      ]),
    );
  }

  /**
   * A certificate for `name` (`serverAuth`: also for 127.0.0.1), signed by the CA, in `<file>.pem` and
   * `<file>.key`; its key P-256, or RSA 2048 (`rsa`: what static-RSA cipher suites need).
   */
  issue(file: string, name: string, usage: 'serverAuth' | 'clientAuth', keyType: 'ec' | 'rsa' = 'ec'): Issued {
    const cert = join(this.dir, `${file}.pem`);
    const key = join(this.dir, `${file}.key`);
    const csr = join(this.dir, `${file}.csr`);
    const ext = join(this.dir, `${file}.ext`);
    const serial = (this.#serial++).toString(16).toUpperCase();
    const san = usage === 'serverAuth' ? `subjectAltName=DNS:${name},IP:127.0.0.1\n` : '';
    writeFileSync(ext, `${san}extendedKeyUsage=${usage}\n`);
    openssl([
      'req',
      ...(keyType === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']),
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ]);
    openssl(
      ['x509', '-req', '-in', csr, '-CA', this.cert, '-CAkey', this.#key, '-set_serial', `0x${serial}`].concat([
        '-days',
        '2',
        '-extfile',
        ext,
        '-out',
        cert,
      ]),
    );
    return { cert, key, serial };
  }

  /** The PEM text of a file the CA wrote. */
  read(file: string): string {
    return readFileSync(file, 'utf8');
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The serial (hex, upper case) of the certificate a TLS server at `port` presents, as `openssl s_client` sees it. */
export async function servedSerial(port: number): Promise<string> {
  const run = (args: string[], input: string) =>
    new Promise<string>((resolve, reject) => {
      const child = execFile('openssl', args, { timeout: 10_000 }, (error, stdout) => (error === null ? resolve(stdout) : reject(error)));
      child.stdin?.end(input);
    });
  const chain = await run(['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost'], '');
  const serial = await run(['x509', '-noout', '-serial'], chain);
  return serial
    .trim()
    .replace(/^serial=/, '')
    .replace(/^0+(?=.)/, '')
    .toUpperCase();
}
