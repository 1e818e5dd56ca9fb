import { createRequire } from 'node:module';

/** The protocol versions and suites of `tls` in the config: what a handshake may negotiate. */
export interface TlsPolicy {
  /** The oldest version a handshake may use (absent: `TLSv1.2`). */
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3' | undefined;
  /** The TLS 1.2 suites, an OpenSSL cipher list (absent: {@link MODERN_TLS12_CIPHERS}). */
  readonly ciphers?: string | undefined;
}

/**
 * The TLS 1.2 suites a server offers by default: forward-secret AEAD suites only (ECDHE key
 * exchange; AES-GCM or ChaCha20-Poly1305), strongest first as the intermediate profile orders them.
 * No static-RSA key exchange (no forward secrecy), no CBC (LUCKY13), no ARIA, CCM or DHE. The
 * `ECDSA` suites serve an ECDSA certificate, the `RSA` ones an RSA certificate.
 */
export const MODERN_TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** The options of a TLS server (and of each of its secure contexts) that {@link TlsPolicy} sets. */
export interface TlsPolicyOptions {
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  readonly ciphers: string;
  readonly honorCipherOrder: true;
}

const load = createRequire(import.meta.url);

/**
 * The server options that enforce `policy`: the minimum version, and a cipher string holding Node's
 * TLS 1.3 suites followed by the TLS 1.2 ones. Node's `ciphers` option carries both kinds (the
 * `TLS_` entries go to TLS 1.3), so the TLS 1.3 suites are written out to stay as Node has them.
 * The server's order wins (`honorCipherOrder`). node:tls is loaded here, by an App with `tls` only.
 *
 * @example
 * https.createServer({ cert, key, ...tlsPolicyOptions({ minVersion: 'TLSv1.2' }) });
 */
export function tlsPolicyOptions(policy: TlsPolicy = {}): TlsPolicyOptions {
  const tls = load('node:tls') as typeof import('node:tls');
  const tls13 = tls.DEFAULT_CIPHERS.split(':').filter((suite) => suite.startsWith('TLS_'));
  return {
    minVersion: policy.minVersion ?? 'TLSv1.2',
    ciphers: [...tls13, policy.ciphers ?? MODERN_TLS12_CIPHERS].join(':'),
    honorCipherOrder: true,
  };
}

/**
 * Why `policy` cannot serve, or `undefined`: a `ciphers` that names TLS 1.3 suites (`TLS_…`, which
 * it does not set), that OpenSSL does not accept, or that leaves no TLS 1.2 suite. Checked by
 * building a secure context with it, as the server will (no certificate needed).
 *
 * @example
 * tlsPolicyProblem({ ciphers: 'AES128-SHA:NO-SUCH' }); // undefined: OpenSSL skips the unknown one
 * tlsPolicyProblem({ ciphers: 'NO-SUCH' }); // "'NO-SUCH' leaves no TLS 1.2 cipher suite OpenSSL knows (no cipher match)"
 */
export function tlsPolicyProblem(policy: TlsPolicy): string | undefined {
  const { ciphers } = policy;
  if (ciphers === undefined) return undefined;
  const tls13 = ciphers.split(':').filter((entry) => /^[!+-]?TLS_/.test(entry));
  if (tls13.length > 0)
    return `names TLS 1.3 suites (${tls13.join(', ')}): tls.ciphers sets the TLS 1.2 suites only, TLS 1.3 keeps Node's own`;
  const tls = load('node:tls') as typeof import('node:tls');
  try {
    tls.createSecureContext(tlsPolicyOptions(policy));
  } catch (error) {
    // OpenSSL's reason, without its code: "error:0A0000B9:SSL routines::no cipher match"
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^error:[^:]*:[^:]*::/, '');
    return `'${ciphers}' leaves no TLS 1.2 cipher suite OpenSSL knows (${reason})`;
  }
  return undefined;
}
