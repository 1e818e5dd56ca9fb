import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { TlsCertificates } from './tls-certificates.ts';

/**
 * An App's TLS material (`tls` of the config; undefined without): the certificate pair read from its
 * files and, when `watch`, the files polled and the pair's expiry exported to `registry` (a cluster
 * worker's pair comes from its primary instead, which watches the files and exports it once).
 *
 * @example
 * const tls = installTls(config, logger, registry, options.watchCertificates ?? true);
 * tls?.use({ cert, key }); // `app.useCertificates`
 */
export function installTls(config: ResolvedConfig, logger: Logger, registry: Registry, watch: boolean): TlsCertificates | undefined {
  const { tls } = config;
  return tls === undefined ? undefined : new TlsCertificates(tls, logger, { watch, registry: watch ? registry : undefined });
}
