import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The files of `tls` in the config (absolute paths once loaded). */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile?: string | undefined;
}

/** A certificate pair read and checked: what a TLS server's secure context is made of. */
export interface TlsMaterial {
  /** PEM: the certificate, then its intermediates. */
  readonly cert: string;
  /** PEM: its private key. */
  readonly key: string;
  /** PEM: the certificate authorities client certificates are verified against. */
  readonly ca?: string | undefined;
}

/** When each file's certificate stops being valid: the one `certFile` starts with, the first to expire in `caFile`. */
export interface TlsExpiry {
  readonly file: string;
  /** Epoch ms of its `notAfter`. */
  readonly notAfter: number;
}

/** A pair that cannot serve: the file at fault, its config key, and why. */
export class TlsFileError extends Error {
  override name = 'TlsFileError';
  readonly file: string;
  readonly key: 'certFile' | 'keyFile' | 'caFile';

  constructor(key: 'certFile' | 'keyFile' | 'caFile', file: string, reason: string) {
    super(`${file} ${reason}`);
    this.key = key;
    this.file = file;
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Reads the files of `tls` and checks them as a TLS server would need them: the certificate file
 * holds PEM certificates, the key file an unencrypted private key that matches the first of them,
 * the CA file (if any) PEM certificates. Throws a {@link TlsFileError} naming the file at fault.
 * Nothing here loads node:tls (see ARCHITECTURE.md, "Start-up").
 *
 * @example
 * const { material, expiry } = readTlsFiles({ certFile: '/etc/tls/tls.crt', keyFile: '/etc/tls/tls.key' });
 */
export function readTlsFiles(files: TlsFiles): { material: TlsMaterial; expiry: TlsExpiry[] } {
  const cert = readText('certFile', files.certFile);
  const key = readText('keyFile', files.keyFile);
  const chain = certificatesOf('certFile', files.certFile, cert);
  const leaf = chain[0] as X509Certificate;
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new TlsFileError('keyFile', files.keyFile, `is not an unencrypted PEM private key (${reasonOf(error)})`);
  }
  if (privateKey.type !== 'private') throw new TlsFileError('keyFile', files.keyFile, 'holds no private key');
  if (!leaf.checkPrivateKey(privateKey))
    throw new TlsFileError('keyFile', files.keyFile, `is not the private key of the certificate in ${files.certFile}`);
  const expiry: TlsExpiry[] = [{ file: files.certFile, notAfter: notAfterOf(leaf) }];
  if (files.caFile === undefined) return { material: { cert, key }, expiry };
  const ca = readText('caFile', files.caFile);
  const authorities = certificatesOf('caFile', files.caFile, ca);
  expiry.push({ file: files.caFile, notAfter: Math.min(...authorities.map(notAfterOf)) });
  return { material: { cert, key, ca }, expiry };
}

function readText(key: TlsFileError['key'], file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES' || code === 'EPERM'
          ? 'cannot be read (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory, not a file'
            : `cannot be read (${code ?? reasonOf(error)})`;
    throw new TlsFileError(key, file, reason);
  }
}

function certificatesOf(key: TlsFileError['key'], file: string, text: string): X509Certificate[] {
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TlsFileError(key, file, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw new TlsFileError(key, file, `holds a certificate that does not parse (the ${ordinal(i + 1)}: ${reasonOf(error)})`);
    }
  });
}

function notAfterOf(certificate: X509Certificate): number {
  return Date.parse(certificate.validTo);
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
