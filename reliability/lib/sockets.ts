import { connect, type Socket } from 'node:net';
import { now, sleep } from './clock.ts';
import { type TcpConnection, tcpStates } from './proc.ts';

/** An idle keep-alive connection: one request answered, then silence; `closedAt` is when the server ended it. */
export interface IdleSocket {
  socket: Socket;
  pid: number | undefined;
  /** First of 'end' / 'close' seen, ms since the epoch. */
  closedAt: number | undefined;
}

/** Opens `count` keep-alive connections, each answered once by `GET /who`, then left idle. */
export async function openIdleSockets(port: number, count: number): Promise<IdleSocket[]> {
  return Promise.all(Array.from({ length: count }, () => openIdle(port)));
}

function openIdle(port: number): Promise<IdleSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const idle: IdleSocket = { socket, pid: undefined, closedAt: undefined };
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      if (head === -1) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(received.slice(0, head))?.[1] ?? 0);
      if (received.length < head + 4 + length) return;
      socket.off('data', onData);
      idle.pid = Number(/"pid":(\d+)/.exec(received)?.[1]);
      resolve(idle);
    };
    const closed = () => {
      idle.closedAt ??= now();
    };
    socket.on('data', onData);
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', (error) => {
      closed();
      if (idle.pid === undefined) reject(error);
    });
    socket.write(`GET /who HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

export type SlowKind = 'slow-headers' | 'slow-body' | 'slow-read';

/** The server the slow clients attack. */
export interface SlowTarget {
  host: string;
  port: number;
  /** The server's network namespace as /proc shows it (`/proc/<pid>/net`), when the clients run in another one. */
  serverNet?: string;
}

export interface SlowResult {
  kind: SlowKind;
  openedAt: number;
  /** When the server ended the connection; undefined when it was still open at `maxMs`. */
  closedAt: number | undefined;
  /** `closedAt - openedAt`. */
  cutAfterMs: number | undefined;
  /** Status line the server sent before closing, if any (e.g. `HTTP/1.1 408 Request Timeout`). */
  statusLine: string | undefined;
  bytesSent: number;
  /** slow-read: the kernel's state of the server's side of the socket once cut (`FIN_WAIT1`: closed, its send queue still held). */
  serverState?: string | undefined;
}

/**
 * One slow client on a raw socket, ended by the server or given up after `maxMs`:
 * - `slow-headers` (slowloris): the request line, then one header line every `tickMs`, never the blank line;
 * - `slow-body`: a complete head announcing a 100 kB JSON body, then one byte every `tickMs`;
 * - `slow-read`: `pipelined` requests for a 4 MiB response, and the socket never read.
 */
export function slowClient(target: SlowTarget, kind: SlowKind, tickMs: number, maxMs: number, pipelined = 4): Promise<SlowResult> {
  const { host, port } = target;
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const result: SlowResult = { kind, openedAt: now(), closedAt: undefined, cutAfterMs: undefined, statusLine: undefined, bytesSent: 0 };
    let ticker: NodeJS.Timeout | undefined;
    let first = '';
    const send = (text: string) => {
      if (!socket.writable) return;
      socket.write(text);
      result.bytesSent += text.length;
    };
    let unwatch = () => {};
    const finish = () => {
      unwatch();
      clearInterval(ticker);
      clearTimeout(giveUp);
      socket.destroy();
      resolve(result);
    };
    let gaveUp = false;
    const giveUp = setTimeout(() => {
      gaveUp = true;
      unwatch();
      clearInterval(ticker);
      socket.destroy();
      resolve(result);
    }, maxMs);
    socket.once('connect', () => {
      result.openedAt = now();
      const hostLine = `Host: ${host}:${port}\r\n`;
      if (kind === 'slow-headers') {
        send(`GET /who HTTP/1.1\r\n${hostLine}`);
        let n = 0;
        ticker = setInterval(() => send(`X-Trickle-${n++}: ${n}\r\n`), tickMs);
      } else if (kind === 'slow-body') {
        send(`POST /upload HTTP/1.1\r\n${hostLine}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n[`);
        ticker = setInterval(() => send('1'), tickMs);
      } else {
        for (let i = 0; i < pipelined; i++) send(`GET /big?kb=4096 HTTP/1.1\r\n${hostLine}\r\n`);
        socket.pause();
        // a socket that is never read reports no 'end': ask the kernel whether the server closed its side
        const connection = { local: socket.localPort ?? 0, remote: port, localAddress: socket.localAddress, remoteAddress: host };
        unwatch = watchClosed(connection, target.serverNet, (serverState, at) => {
          result.serverState = serverState;
          result.closedAt = at;
          result.cutAfterMs = at - result.openedAt;
          closed();
        });
      }
    });
    socket.on('data', (chunk: Buffer) => {
      if (first.length < 200) first += chunk.toString('latin1');
      result.statusLine ??= first.includes('\r\n') ? first.slice(0, first.indexOf('\r\n')) : undefined;
    });
    const closed = () => {
      if (gaveUp) return;
      if (result.closedAt === undefined) {
        result.closedAt = now();
        result.cutAfterMs = result.closedAt - result.openedAt;
      }
      finish();
    };
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', closed);
  });
}

/** Sockets whose server side we watch through the kernel, polled together once a second. */
interface Watch {
  onClosed: (serverState: string | undefined, at: number) => void;
  /** When the socket first looked closed, and the server side's state then. */
  seenAt: number | undefined;
  state: string | undefined;
}
const watched = new Map<TcpConnection & { serverNet: string | undefined }, Watch>();
let poller: NodeJS.Timeout | undefined;

/**
 * Calls `onClosed` once the server has closed its side of our `connection`. Our side
 * cannot tell while we do not read: the server's FIN waits behind the data it still has queued for us.
 * The server's side tells at once: it leaves ESTABLISHED (FIN_WAIT1, the kernel keeping its send queue).
 * /proc/net/tcp is not read atomically and may miss a socket: two polls in a row must agree; the first
 * one's time counts. The server's side is read from `serverNet` when the server runs in another network
 * namespace.
 */
function watchClosed(
  connection: TcpConnection,
  serverNet: string | undefined,
  onClosed: (serverState: string | undefined, at: number) => void,
): () => void {
  const key = { ...connection, serverNet };
  watched.set(key, { onClosed, seenAt: undefined, state: undefined });
  poller ??= setInterval(() => {
    // when the poll began: reading /proc/net/tcp* takes a while on a busy machine with thousands of sockets
    const at = now();
    const keys = [...watched.keys()];
    const ourStates = tcpStates(keys);
    // the server's sides: one read per namespace
    const serverStates = new Map<(typeof keys)[number], string | undefined>();
    for (const net of new Set(keys.map((k) => k.serverNet))) {
      const group = keys.filter((k) => k.serverNet === net);
      const states = tcpStates(
        group.map((k) => ({ local: k.remote, remote: k.local, localAddress: k.remoteAddress, remoteAddress: k.localAddress })),
        net,
      );
      for (const [i, k] of group.entries()) serverStates.set(k, states[i]);
    }
    keys.forEach((k, i) => {
      const watch = watched.get(k);
      if (watch === undefined) return;
      const ours = ourStates[i];
      const server = serverStates.get(k);
      const closed = server !== 'ESTABLISHED' || ours === undefined || ours === 'CLOSE_WAIT' || ours === 'CLOSE';
      if (!closed) {
        watch.seenAt = undefined;
      } else if (watch.seenAt === undefined) {
        watch.seenAt = at;
        watch.state = server;
      } else {
        watch.onClosed(watch.state, watch.seenAt);
      }
    });
  }, 1_000);
  return () => {
    watched.delete(key);
    if (watched.size === 0) {
      clearInterval(poller);
      poller = undefined;
    }
  };
}

/** Runs `count` slow clients of one kind, started `staggerMs` apart. */
export async function slowClients(
  target: SlowTarget,
  kind: SlowKind,
  count: number,
  tickMs: number,
  maxMs: number,
  staggerMs = 20,
): Promise<SlowResult[]> {
  const runs: Promise<SlowResult>[] = [];
  for (let i = 0; i < count; i++) {
    runs.push(slowClient(target, kind, tickMs, maxMs));
    await sleep(staggerMs);
  }
  return Promise.all(runs);
}
