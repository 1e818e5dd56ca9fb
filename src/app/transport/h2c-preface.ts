import type { Socket } from 'node:net';

/** What an HTTP/2 client with prior knowledge sends first (RFC 9113 §3.4); no HTTP/1.1 request starts so. */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** `h2`: the bytes so far are the preface; `h1`: they cannot start it; `more`: a prefix of it, too short to tell. */
export type PrefaceVerdict = 'h2' | 'h1' | 'more';

/**
 * Whether a connection's first bytes are the HTTP/2 connection preface.
 *
 * @example
 * prefaceOf(Buffer.from('GET / HTTP/1.1\r\n')); // 'h1'
 */
export function prefaceOf(bytes: Buffer): PrefaceVerdict {
  const n = Math.min(bytes.length, H2_PREFACE.length);
  if (bytes.compare(H2_PREFACE, 0, n, 0, n) !== 0) return 'h1';
  return n === H2_PREFACE.length ? 'h2' : 'more';
}

/**
 * Reads a plain connection until its first bytes tell HTTP/2 with prior knowledge (h2c) from
 * HTTP/1.1, then calls `decided` with what was read (`head`: bytes already read by whoever
 * handed the socket over, which count first). A client that sends too little to tell within
 * `timeoutMs` (or closes) is dropped. An HTTP/1.1 client pays one read listener, once.
 *
 * @example
 * sniffPreface(socket, undefined, 10_000, (protocol, read) => (protocol === 'h2' ? toH2(socket, read) : toH1(socket, read)));
 */
export function sniffPreface(
  socket: Socket,
  head: Buffer | undefined,
  timeoutMs: number,
  decided: (protocol: 'h1' | 'h2', read: Buffer) => void,
): void {
  let read = head ?? Buffer.alloc(0);
  const verdict = read.length === 0 ? 'more' : prefaceOf(read);
  if (verdict !== 'more') {
    decided(verdict, read);
    return;
  }
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const onClose = () => clearTimeout(timer);
  const onData = (chunk: Buffer) => {
    read = read.length === 0 ? chunk : Buffer.concat([read, chunk]);
    const now = prefaceOf(read);
    if (now === 'more') return;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.pause();
    decided(now, read);
  };
  socket.on('data', onData);
  socket.once('close', onClose);
}
