/**
 * Whether the workers listen on sockets of their own with SO_REUSEPORT:
 * `cluster.balancing: kernel` on Linux, where the kernel spreads new
 * connections across such sockets by a hash of their addresses and ports.
 * Elsewhere (macOS has no balancing SO_REUSEPORT; libuv refuses it) `kernel`
 * keeps node:cluster's `SCHED_NONE`: one socket, shared by the workers, each
 * accepting from it. Shared: the worker listens by it, the primary picks the
 * port of `port: 0` by it (each worker would get a port of its own otherwise).
 *
 * @example
 * ownSockets('kernel', 'linux'); // true
 * ownSockets('kernel', 'darwin'); // false: one shared socket
 */
export function ownSockets(balancing: 'primary' | 'kernel', platform: NodeJS.Platform = process.platform): boolean {
  return balancing === 'kernel' && platform === 'linux';
}
