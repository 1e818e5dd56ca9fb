import { createServer } from 'node:net';

/**
 * The port every worker listens on. Workers with SO_REUSEPORT sockets of their
 * own (`ownSockets`) would each get a different port from `port: 0`: the
 * primary asks the OS for a free one on `host` (a listener opened and closed
 * at once) and hands that port to all of them, replacements included.
 * Otherwise, or when even that listener fails (the workers then report the
 * error), the configured port: node:cluster shares one socket, port 0 included.
 *
 * @example
 * const port = await workerPort({ port: 0, host: '127.0.0.1' }, true); // e.g. 41877
 */
export async function workerPort(config: { port: number; host: string }, ownSockets: boolean): Promise<number> {
  if (!ownSockets || config.port !== 0) return config.port;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port: 0, host: config.host }, resolve);
    });
    const address = probe.address();
    return typeof address === 'object' && address !== null ? address.port : config.port;
  } catch {
    return config.port;
  } finally {
    probe.close();
  }
}
