import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import type { WireMetrics } from '../../metrics/protocol-metrics.ts';
import { listen } from '../../utils/listen.ts';
import type { TlsMaterial } from '../../utils/tls-files.ts';
import type { ConnectionSource } from '../transport/connection-source.ts';
import { ConnectionTracker } from '../transport/connections.ts';
import { createFront, type Front } from '../transport/front.ts';
import type { ArrivalShedding, QueuedHandler } from '../transport/request-queue.ts';

/** What the App hands the lifecycle to serve its port: the request handler and where connections come from. */
export interface BindingParts {
  readonly handler: QueuedHandler;
  /** The App's admission control (`overload.enabled`), which the request queue asks while it sheds. */
  readonly admission: ArrivalShedding | undefined;
  /** The server's `upgrade` listener: upgrade requests through the same pipeline (src/app/websocket/websocket-route.ts). */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Listen on a SO_REUSEPORT socket of this process's own (see `AppOptions.reusePort`). */
  readonly reusePort: boolean;
  /** Bind nothing: serve the connections this source hands over (see `AppOptions.connections`). */
  readonly source: ConnectionSource | undefined;
  /** Connections counted by protocol (an App with `tls` or `http2`). */
  readonly wire?: WireMetrics | undefined;
}

/** What the lifecycle asks of the App's TLS certificates (see src/app/transport/tls-certificates.ts). */
export interface TlsPart {
  /** The pair the server starts with. */
  material(): TlsMaterial;
  /** From now on, a new pair goes to `front` (its new handshakes). */
  attach(front: Front): void;
  /** Stops watching the files. */
  close(): void;
}

/** The App's servers behind its port, their connections, and the address they serve. */
export interface Bound {
  readonly front: Front;
  readonly connections: ConnectionTracker;
  readonly address: { host: string; port: number };
}

/** The lifecycle as the binding reads it: a handed connection is refused once the App has closed. */
interface LifecycleState {
  readonly state: string;
}

/**
 * Builds the App's front (HTTP/1.1, TLS, HTTP/2 as the config says) with the certificate pair of `tls`,
 * tracks its connections, and binds `config.port` on `config.host`, or, with `parts.source`, binds
 * nothing and serves the connections it hands over. A failure to bind closes the front and throws.
 *
 * @example
 * const { front, connections, address } = await bind(config, logger, 'standalone', parts, tls, lifecycle);
 */
export async function bind(
  config: ResolvedConfig,
  logger: Logger,
  role: string,
  parts: BindingParts,
  tls: TlsPart | undefined,
  lifecycle: LifecycleState,
): Promise<Bound> {
  const { source, reusePort } = parts;
  const front = createFront(config, tls?.material(), logger);
  try {
    tls?.attach(front);
    const connections = new ConnectionTracker(front, parts.handler, {
      // requests wait in a queue of ours, where admission control sees how long (see request-queue.ts)
      queued: config.overload.enabled,
      admission: parts.admission,
      // a cluster worker accepting from the socket its primary shares (`balancing: kernel`) may be the last to close it
      ownQueue: reusePort || (role === 'worker' && source === undefined),
      until: source?.ended,
      upgrade: parts.upgrade,
      streamTimeoutMs: config.timeouts.socketMs,
    });
    const wire = parts.wire;
    if (wire !== undefined) {
      front.onConnection(() => wire.connection('h1'));
      front.onSession(() => wire.connection('h2'));
    }
    const address =
      source === undefined ? await listen(front.listener, config.port, config.host, { reusePort }) : serve(front, source, lifecycle);
    return { front, connections, address };
  } catch (error) {
    front.close();
    throw error;
  }
}

/**
 * Serves what `source` hands over on `front`, which binds nothing: a connection is the server's
 * as if it had accepted it (its bytes read already come first), until the App has closed.
 */
function serve(front: Front, source: ConnectionSource, lifecycle: LifecycleState): { host: string; port: number } {
  // what node:http does on 'listening': it starts checking its connections' header and request timeouts
  front.started();
  source.open((socket, head) => {
    if (lifecycle.state === 'closed') return false;
    // what net.Server does to a connection it accepts, before its 'connection' event: node:http's
    // servers turn Nagle's algorithm off (without it, a response written in two parts waits for the
    // peer's delayed ACK: +40 ms at p99, a quarter less throughput on keep-alive connections)
    socket.setNoDelay(true);
    front.accept(socket, head);
    return true;
  });
  return source.address;
}
