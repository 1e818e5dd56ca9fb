import type { TlsExpiry } from '../utils/tls-files.ts';
import { Gauge, type Registry } from './prom-client.ts';

/**
 * `flotilla_tls_certificate_expiry_seconds{file}`: the seconds left until each certificate file's
 * `notAfter` (the served certificate; in `tls.caFile`, the first of its authorities to expire),
 * negative once expired; read at each scrape from the pair in use. In a cluster, the primary exports
 * it once (it reads the files and hands the pair to the workers); a standalone App, itself.
 *
 * @example
 * tlsExpiryGauge(registry, () => certs.expiry);
 */
export function tlsExpiryGauge(registry: Registry, expiry: () => readonly TlsExpiry[]): Gauge<'file'> {
  return new Gauge({
    name: 'flotilla_tls_certificate_expiry_seconds',
    help: 'Seconds until the certificate in use expires (notAfter), by file: tls.certFile, and the first authority of tls.caFile to expire.',
    labelNames: ['file'],
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const { file, notAfter } of expiry()) this.set({ file }, Math.round((notAfter - now) / 1000));
    },
  });
}
