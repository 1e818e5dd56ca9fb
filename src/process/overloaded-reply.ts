import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { ERROR_CODES, problemType } from '../errors/codes.ts';

/** A turned-away connection is destroyed this long after its answer at the latest (its client should close first). */
const LINGER_MS = 2_000;

/** The request target of a request's first line, when `head` holds that line. */
function targetOf(head: Buffer | undefined): string {
  if (head === undefined) return '';
  const line = head.subarray(0, Math.min(head.length, 2_048)).toString('latin1');
  const match = /^[A-Z]+ (\/[^ ?\r\n]*)/.exec(line);
  return match?.[1] ?? '';
}

/**
 * Answers a connection that no worker can take in time with `503 OVERLOADED`
 * and `Retry-After`, written straight to the socket (no HTTP parser, no
 * worker: it costs the primary a few µs), then closes it. What the client
 * sent is read and dropped meanwhile: closing a socket with unread bytes would
 * reset it and could lose the answer on the way. `head`: what was read
 * already, for the problem's `instance`. `headers`: raw head lines written as they are, the
 * security headers of `securityHeaders` (`headerLines` in src/app/headers/security-headers.ts), so that
 * this answer carries them like every other.
 *
 * @example
 * answerOverloaded(socket, { retryAfterS: 1, headers: 'X-Content-Type-Options: nosniff\r\n' });
 */
export function answerOverloaded(
  socket: Socket,
  { retryAfterS, head, headers = '' }: { retryAfterS: number; head?: Buffer | undefined; headers?: string },
): void {
  const code = 'OVERLOADED';
  const { status, title } = ERROR_CODES[code];
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: problemType(code),
    title,
    status,
    detail: 'the service is past its capacity: retry later',
    instance: targetOf(head),
    code,
    requestId,
  });
  socket.on('error', () => socket.destroy());
  socket.on('data', () => {});
  socket.resume();
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\n${headers}Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Retry-After: ${retryAfterS}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
