import { createServer } from 'node:net';

/**
 * The port every worker listens on, or `undefined` when the configured port is
 * held already. Workers with SO_REUSEPORT sockets of their own (`ownSockets`)
 * need the primary's help twice:
 *
 * - with `port: 0` each would get a different port: the primary asks the OS
 *   for a free one on `host` (a listener opened and closed at once) and hands
 *   that port to all of them, replacements included;
 * - with a fixed port, a holder that also set SO_REUSEPORT (another cluster
 *   started on the same port) would let them bind beside it and silently share
 *   its traffic: a listener without SO_REUSEPORT, opened and closed at once,
 *   fails with `EADDRINUSE` whoever holds the port.
 *
 * Otherwise, or when the probe fails another way (the workers then report the
 * error), the configured port: node:cluster shares one socket, port 0 included,
 * and reports a port in use itself.
 *
 * @example
 * const port = await workerPort({ port: 0, host: '127.0.0.1' }, true); // e.g. 41877
 */
export async function workerPort(config: { port: number; host: string }, ownSockets: boolean): Promise<number | undefined> {
  if (!ownSockets) return config.port;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port: config.port, host: config.host }, resolve);
    });
    const address = probe.address();
    return typeof address === 'object' && address !== null ? address.port : config.port;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? undefined : config.port;
  } finally {
    probe.close();
  }
}
