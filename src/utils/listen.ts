import type { AddressInfo, Server } from 'node:net';

/**
 * `server.listen({ port, host })` as a promise of the bound address; rejects
 * with the listen error (`EADDRINUSE`, `EACCES`…). `reusePort`: a socket of
 * this process's own with SO_REUSEPORT, next to the other processes' on the
 * same port (the kernel spreads the connections across them), instead of a
 * cluster worker asking its primary for the shared one.
 *
 * @example
 * const { port } = await listen(server, 0, '127.0.0.1');
 */
export function listen(server: Server, port: number, host: string, { reusePort = false } = {}): Promise<{ host: string; port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ...(reusePort ? { reusePort } : {}) }, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({ host: address.address, port: address.port });
    });
  });
}
