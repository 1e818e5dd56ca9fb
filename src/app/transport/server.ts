import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import { ERROR_CODES, type ErrorCode, problemType } from '../../errors/codes.ts';
import { createServer } from '../../utils/node-http.ts';
import { headerLines, securityHeaderList } from '../headers/security-headers.ts';

/**
 * A node:http server with limits suited to the public edge: bounded head size
 * and time, bounded request time, keep-alive longer than common load
 * balancers' idle timeouts, and problem+json answers to malformed requests.
 */
export function createHttpServer(config: ResolvedConfig, logger?: Logger): Server {
  const server = createServer(httpServerOptions(config));
  server.maxRequestsPerSocket = 0;
  // Inactivity while a response is pending: a client that stops reading (slow read) is cut after this long
  // (by the ConnectionTracker, which resets rather than closes such a connection).
  server.timeout = config.timeouts.socketMs;
  onClientError(server, config, logger);
  return server;
}

/** node:http's options from the config: what its TLS and HTTP/2 servers take for their HTTP/1.1 connections too. */
export function httpServerOptions(config: ResolvedConfig) {
  const { limits, timeouts } = config;
  return {
    maxHeaderSize: limits.headerBytes,
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: Math.min(2_000, timeouts.headersMs),
    // checked by the pipeline instead, so that the 400 is a problem like every other one
    requireHostHeader: false,
    insecureHTTPParser: false,
  };
}

/** Malformed HTTP/1.1 requests on `server` are answered with a problem and logged on `logger` (see `answerClientError`). */
export function onClientError(server: EventEmitter, config: ResolvedConfig, logger: Logger | undefined): void {
  const headers = headerLines(securityHeaderList(config.securityHeaders));
  const { headerBytes } = config.limits;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, headerBytes, headers, logger),
  );
}

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/**
 * Malformed requests never reach the pipeline; answer them with a problem (and the security headers'
 * raw lines) and close. Like every request, the answer has a request id (in the problem and
 * `X-Request-Id`), and a log line carries it: a client that reports it can be found.
 */
function answerClientError(
  error: NodeJS.ErrnoException & { rawPacket?: Buffer },
  socket: Duplex,
  headerBytes: number,
  headers: string,
  logger: Logger | undefined,
): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const targetTooLong = error.code === 'HPE_HEADER_OVERFLOW' && requestLineTooLong(error.rawPacket, headerBytes);
  const code = targetTooLong ? 'URI_TOO_LONG' : (CLIENT_ERRORS[error.code ?? ''] ?? 'BAD_REQUEST');
  const { status, title } = ERROR_CODES[code];
  const requestId = randomUUID();
  const detail = 'the request could not be parsed';
  const body = JSON.stringify({ type: problemType(code), title, status, detail, instance: '', code, requestId });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\n${headers}X-Request-Id: ${requestId}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  const ip = (socket as Duplex & { remoteAddress?: string }).remoteAddress;
  logger?.info({ requestId, ip, status, code, reason: error.code }, 'request refused before it was parsed');
}

/**
 * Whether the data that overflowed the head limit starts with a request line
 * longer than the limit on its own: the target is too long (414), rather than
 * the headers (431). The parser hands over the chunk it was parsing.
 */
function requestLineTooLong(packet: Buffer | undefined, limit: number): boolean {
  if (packet === undefined || !/^[A-Z]+ /.test(packet.subarray(0, 24).toString('latin1'))) return false;
  const end = packet.indexOf('\n');
  return end === -1 || end > limit;
}
