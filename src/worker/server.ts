import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ResolvedConfig } from '../config/types.ts';
import { ERROR_CODES, type ErrorCode, problemType } from '../errors/codes.ts';

/**
 * A node:http server with limits suited to the public edge: bounded head size
 * and time, bounded request time, keep-alive longer than common load
 * balancers' idle timeouts, and problem+json answers to malformed requests.
 */
export function createHttpServer(config: ResolvedConfig, handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const { limits, timeouts } = config;
  const server = createServer(
    {
      maxHeaderSize: limits.headerBytes,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: Math.min(2_000, timeouts.headersMs),
      requireHostHeader: true,
      insecureHTTPParser: false,
    },
    handler,
  );
  server.maxRequestsPerSocket = 0;
  server.on('clientError', answerClientError);
  return server;
}

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** Malformed requests never reach the pipeline; answer them with a problem and close. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const code = CLIENT_ERRORS[error.code ?? ''] ?? 'BAD_REQUEST';
  const { status, title } = ERROR_CODES[code];
  const body = JSON.stringify({ type: problemType(code), title, status, detail: 'the request could not be parsed', instance: '', code });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
