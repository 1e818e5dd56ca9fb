import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { isRecord } from '../utils/is-record.ts';
import { readTlsFiles, TlsFileError } from '../utils/tls-files.ts';
import { tlsPolicyProblem } from '../utils/tls-policy.ts';
import { ConfigError } from './config-error.ts';

/** Largest config file accepted, in bytes. */
export const MAX_CONFIG_BYTES = 1_048_576;

/** A problem found beyond the schema, for a key of the config (located by the caller). */
export interface ExtraProblem {
  path: (string | number)[];
  message: string;
}

/** Reads a file as UTF-8, refusing more than `MAX_CONFIG_BYTES`; throws `ConfigError`. */
export function readConfigText(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw fileError(file, describeFsError(error));
  }
  try {
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_CONFIG_BYTES) throw fileError(file, `is larger than ${MAX_CONFIG_BYTES} bytes`);
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw fileError(file, error instanceof TypeError ? 'is not valid UTF-8' : describeFsError(error));
  } finally {
    closeSync(fd);
  }
}

/**
 * The problems of `tls`'s files: each must be readable, the certificate and the key must parse and
 * match, the CA file must hold certificates. Checked at load time, so that a wrong file is a
 * config error naming its key and line rather than every worker failing to boot. So is a
 * `tls.ciphers` OpenSSL does not accept (src/utils/tls-policy.ts).
 */
export function tlsProblems(tls: unknown, pathOf: (file: string) => string): ExtraProblem[] {
  if (!isRecord(tls)) return [];
  const { certFile, keyFile, caFile, ciphers } = tls;
  // a list the schema refuses (its pattern) is reported by the schema
  const suites = typeof ciphers === 'string' && /^[\w+:!@=.-]+$/.test(ciphers) ? tlsPolicyProblem({ ciphers }) : undefined;
  const problems: ExtraProblem[] = suites === undefined ? [] : [{ path: ['tls', 'ciphers'], message: suites }];
  if (typeof certFile !== 'string' || certFile === '' || typeof keyFile !== 'string' || keyFile === '') return problems;
  const ca = typeof caFile === 'string' && caFile !== '' ? pathOf(caFile) : undefined;
  try {
    readTlsFiles({ certFile: pathOf(certFile), keyFile: pathOf(keyFile), caFile: ca });
    return problems;
  } catch (error) {
    if (!(error instanceof TlsFileError)) throw error;
    return [...problems, { path: ['tls', error.key], message: error.message }];
  }
}

/** `tls` with its files resolved against the config file's directory. */
export function resolvedTls<T extends { certFile: string; keyFile: string; caFile?: string }>(tls: T, pathOf: (file: string) => string): T {
  return {
    ...tls,
    certFile: pathOf(tls.certFile),
    keyFile: pathOf(tls.keyFile),
    ...(tls.caFile === undefined ? {} : { caFile: pathOf(tls.caFile) }),
  };
}

/**
 * Why the service module at `path` cannot be loaded, or `undefined` when it is
 * a readable file. Checked at load time, so that a wrong `service` is a config
 * error (exit 2) rather than every worker failing to boot.
 */
export function serviceFileProblem(path: string): string | undefined {
  try {
    const stats = statSync(path);
    if (stats.isDirectory()) return 'is a directory, not a file';
    if (!stats.isFile()) return 'is not a regular file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    return describeFsError(error);
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return `cannot be read (${code ?? (error instanceof Error ? error.message : String(error))})`;
}

export function fileError(file: string, message: string): ConfigError {
  return new ConfigError([{ key: '', path: [], file, message: `the config file ${message}` }]);
}
