import type { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Http2SecureServer, Http2Server, ServerHttp2Session } from 'node:http2';
import type { Server as HttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import type { TlsMaterial } from '../../utils/tls-files.ts';
import { type TlsPolicyOptions, tlsPolicyOptions } from '../../utils/tls-policy.ts';
import { compatClasses } from './h2-compat.ts';
import { sniffPreface } from './h2c-preface.ts';
import { createHttpServer, httpServerOptions, onClientError } from './server.ts';

/** What serves on the port: `h1` alone (node:http), or `h1` and `h2` side by side; over TLS or not. */
export interface FrontKind {
  readonly tls: boolean;
  readonly http2: boolean;
}

/** A request's protocol on the wire. */
export type WireProtocol = 'h1' | 'h2';

/**
 * The servers behind the port, whatever their kind (ARCHITECTURE.md, "A TLS or HTTP/2 connection's
 * path"): plain HTTP/1.1 is one node:http server; TLS, node:https's; TLS with `http2`, node:http2's
 * secure server (ALPN picks h2 or http/1.1); `http2` without TLS, a plain listener that reads each
 * connection's first bytes and hands it to an HTTP/2 server (the h2c preface) or to the node:http
 * one. The ConnectionTracker, the lifecycle and the shutdown see them through this one interface.
 * node:https and node:http2 are loaded only by an App configured for them.
 *
 * @example
 * const front = createFront(config, readTlsFiles(config.tls).material);
 * await listen(front.listener, config.port, config.host);
 */
export interface Front {
  readonly kind: FrontKind;
  /** What binds the port; closing it (net's close) stops accepting. */
  readonly listener: NetServer;
  /** The servers emitting `request` (one, or the h1 and the h2c ones). */
  readonly requests: readonly EventEmitter[];
  /** Serves a connection accepted elsewhere (the primary's hand-off), `head` being what was read from it. */
  accept(socket: Socket, head: Buffer | undefined): void;
  /** What a server does once it listens (node:http starts checking its timeouts), for a front that binds nothing. */
  started(): void;
  /** Every TCP connection accepted, before any handshake. */
  onAccepted(listener: (socket: Socket) => void): void;
  /** Every HTTP/1.1 connection (TLS ones once their handshake is done): the socket its requests' `req.socket` is. */
  onConnection(listener: (socket: Socket) => void): void;
  /** Every HTTP/2 session. */
  onSession(listener: (session: ServerHttp2Session) => void): void;
  onUpgrade(listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): void;
  /** An HTTP/1.1 connection or an HTTP/2 session inactive for `timeouts.socketMs`. */
  onTimeout(listener: (connection: Socket | ServerHttp2Session) => void): void;
  /** New handshakes use this pair (TLS only). */
  setSecureContext(material: TlsMaterial): void;
  /** node:http's close: the listener, and the HTTP/1.1 connections that are idle. */
  close(): void;
  /** Destroys the HTTP/1.1 connections left (node:http's `closeAllConnections`). */
  closeAllConnections(): void;
}

const load = createRequire(import.meta.url);

/**
 * The front `config` asks for: TLS when `material` is given (`tls` in the config), HTTP/2 beside
 * HTTP/1.1 with `http2`.
 */
export function createFront(config: ResolvedConfig, material: TlsMaterial | undefined, logger?: Logger): Front {
  if (material !== undefined) return config.http2 ? secureH2Front(config, material, logger) : httpsFront(config, material, logger);
  return config.http2 ? h2cFront(config, logger) : plainFront(createHttpServer(config, logger));
}

/**
 * The options of a TLS server's secure context: the pair, for mTLS the client certificates' CA, and
 * `policy`'s versions and suites (src/utils/tls-policy.ts). A reload's `setSecureContext` takes them
 * all again: node:tls resets what it is not given (its suites and minimum version to Node's defaults).
 */
export function secureContextOptions(material: TlsMaterial, policy: TlsPolicyOptions) {
  return { cert: material.cert, key: material.key, ...(material.ca === undefined ? {} : { ca: material.ca }), ...policy };
}

function tlsOptions(config: ResolvedConfig, material: TlsMaterial, policy: TlsPolicyOptions) {
  const clientCert = config.tls?.requestClientCert === true;
  // a client certificate is asked for only with mTLS, and then a handshake without a valid one fails
  return { ...secureContextOptions(material, policy), requestCert: clientCert, rejectUnauthorized: clientCert };
}

function http2Settings(config: ResolvedConfig, http2: typeof import('node:http2')) {
  return {
    ...compatClasses(http2),
    settings: { maxConcurrentStreams: config.limits.concurrentStreams, maxHeaderListSize: config.limits.headerBytes },
    // streams past maxConcurrentStreams are refused (REFUSED_STREAM); a client that keeps opening them by the
    // thousand is taken for a flood and cut off with GOAWAY (test/app/transport/h2-streams.test.ts)
    maxSessionRejectedStreams: 100,
  };
}

/** An h1 server and its own listener: one object. */
function plainFront(server: Server): Front {
  return {
    kind: { tls: false, http2: false },
    listener: server,
    requests: [server],
    accept(socket, head) {
      server.emit('connection', socket);
      if (head !== undefined) socket.emit('data', head);
    },
    started: () => server.emit('listening'),
    onAccepted: (listener) => server.on('connection', listener),
    onConnection: (listener) => server.on('connection', listener),
    onSession: () => {},
    onUpgrade: (listener) => server.on('upgrade', listener),
    onTimeout: (listener) => server.on('timeout', listener),
    setSecureContext: () => {},
    close: () => server.close(),
    closeAllConnections: () => server.closeAllConnections(),
  };
}

/** A TLS server (node:https, or node:http2's with `allowHTTP1`): h1 connections are the TLS sockets. */
function tlsFront(server: HttpsServer | Http2SecureServer, kind: FrontKind, policy: TlsPolicyOptions): Front {
  const closeAll = load('node:http').Server.prototype.closeAllConnections as (this: unknown) => void;
  return {
    kind,
    listener: server,
    requests: [server],
    accept(socket, head) {
      // a TLS socket reads its transport's handle itself: bytes already read are put back first
      if (head !== undefined) socket.unshift(head);
      server.emit('connection', socket);
    },
    started: () => server.emit('listening'),
    onAccepted: (listener) => server.on('connection', listener),
    onConnection: (listener) =>
      server.on('secureConnection', (socket: Socket & { alpnProtocol?: string | false }) => {
        if (socket.alpnProtocol !== 'h2') listener(socket);
      }),
    onSession: (listener) => server.on('session', listener),
    onUpgrade: (listener) => server.on('upgrade', listener),
    onTimeout: (listener) => server.on('timeout', listener),
    // one secure context per pair loaded, shared by every handshake after it
    setSecureContext: (material) => server.setSecureContext(secureContextOptions(material, policy)),
    close: () => server.close(),
    closeAllConnections: () => closeAll.call(server),
  };
}

function httpsFront(config: ResolvedConfig, material: TlsMaterial, logger: Logger | undefined): Front {
  const https = load('node:https') as typeof import('node:https');
  const policy = tlsPolicyOptions(config.tls);
  const server = https.createServer({ ...httpServerOptions(config), ...tlsOptions(config, material, policy) });
  server.timeout = config.timeouts.socketMs;
  onClientError(server, config, logger);
  return tlsFront(server, { tls: true, http2: false }, policy);
}

function secureH2Front(config: ResolvedConfig, material: TlsMaterial, logger: Logger | undefined): Front {
  const http2 = load('node:http2') as typeof import('node:http2');
  const policy = tlsPolicyOptions(config.tls);
  const server = http2.createSecureServer({
    ...httpServerOptions(config),
    ...tlsOptions(config, material, policy),
    ...http2Settings(config, http2),
    allowHTTP1: true,
  });
  // node:http2 answers a failed handshake as an HTTP/1.1 client error: it gets no answer but the TLS alert
  server.removeAllListeners('tlsClientError');
  server.on('tlsClientError', (_error: Error, socket: Duplex) => socket.destroy());
  server.setTimeout(config.timeouts.socketMs);
  onClientError(server, config, logger);
  return tlsFront(server, { tls: true, http2: true }, policy);
}

/** h2c with prior knowledge and HTTP/1.1 on one plain port: each connection's first bytes choose its server. */
function h2cFront(config: ResolvedConfig, logger: Logger | undefined): Front {
  const http2 = load('node:http2') as typeof import('node:http2');
  const h1 = createHttpServer(config, logger);
  const h2: Http2Server = http2.createServer(http2Settings(config, http2));
  h2.setTimeout(config.timeouts.socketMs);
  const route = (socket: Socket, head: Buffer | undefined) =>
    sniffPreface(socket, head, config.timeouts.headersMs, (protocol, read) => {
      if (protocol === 'h2') {
        // node:http2 reads what the socket holds already before its handle
        socket.unshift(read);
        h2.emit('connection', socket);
        return;
      }
      h1.emit('connection', socket);
      socket.emit('data', read);
    });
  const listener = new NetServer({ noDelay: true }, (socket) => route(socket, undefined));
  // node:http starts checking its connections' timeouts once it listens: here, once the listener does
  listener.on('listening', () => h1.emit('listening'));
  return {
    kind: { tls: false, http2: true },
    listener,
    requests: [h1, h2],
    accept: route,
    started: () => h1.emit('listening'),
    onAccepted: (l) => listener.on('connection', l),
    onConnection: (l) => h1.on('connection', l),
    onSession: (l) => h2.on('session', l),
    onUpgrade: (l) => h1.on('upgrade', l),
    onTimeout(l) {
      h1.on('timeout', l);
      h2.on('timeout', l);
    },
    setSecureContext: () => {},
    close() {
      listener.close();
      h1.close();
    },
    closeAllConnections: () => h1.closeAllConnections(),
  };
}
