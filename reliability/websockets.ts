/**
 * `node --conditions=source reliability/websockets.ts`: what a slow WebSocket reader costs a worker.
 * A real cluster (`flotilla start`, 2 workers); one client completes the handshake on `GET /sub` and
 * then never reads; a publisher sends 64 KiB messages to the topic, 100 a second for 8 s (50 MiB).
 * The workers' RSS is sampled every 100 ms. Run twice: with the default `websockets.maxBufferedBytes`
 * (1 MiB: the reader is closed with 1013) and with the bound set out of reach (1 GiB), which is what
 * a server without one does. Writes reliability/results/websockets.md.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { ClusterProcess, configYaml } from '../tools/cluster-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVICE = fileURLToPath(new URL('../tools/websocket-fanout-service.ts', import.meta.url));
const MESSAGE = 'x'.repeat(64 * 1024);
const RATE = 100;
const SECONDS = 8;

function rssMiB(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

async function run(
  maxBufferedBytes: number | undefined,
  slowReader = true,
): Promise<{ growthMiB: number; closedAfterMs: number | undefined; code: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-slow-ws-'));
  const file = join(dir, 'app.yaml');
  const websockets = maxBufferedBytes === undefined ? {} : { websockets: { maxBufferedBytes } };
  writeFileSync(file, configYaml({ serviceName: 'slow-ws', service: SERVICE, logging: { requests: false }, ...websockets }, {}));
  const cluster = new ClusterProcess({ cli: join(ROOT, 'src/cli/main.ts'), execArgv: ['--conditions=source'], configFile: file });
  try {
    const { appPort, workers } = await cluster.ready(2, 30_000);
    const pids = [...workers.values()];
    // the slow reader: a raw socket that reads the handshake's answer, then nothing
    const slow = connect(appPort, '127.0.0.1');
    slow.setNoDelay(true);
    const answered = new Promise<void>((resolve) => slow.once('data', () => resolve()));
    slow.write(
      'GET /sub HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    await answered;
    slow.pause();
    // without the slow reader: the same publishes to a socket that reads, for what the traffic alone costs
    if (!slowReader) slow.resume();
    slow.on('error', () => {});
    const publisher = await new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${appPort}/pub`);
      socket.once('open', () => resolve(socket));
      socket.once('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const base = pids.reduce((sum, pid) => sum + rssMiB(pid), 0);
    let peak = base;
    const sampler = setInterval(() => {
      peak = Math.max(
        peak,
        pids.reduce((sum, pid) => sum + rssMiB(pid), 0),
      );
    }, 100);
    const startedAt = Date.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      publisher.send(MESSAGE);
      await new Promise((resolve) => setTimeout(resolve, 1000 / RATE));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    clearInterval(sampler);
    publisher.close();
    slow.destroy();
    const line = cluster.lines.find((l) => l.msg === 'websocket closed: slow consumer');
    return {
      growthMiB: peak - base,
      closedAfterMs: line === undefined ? undefined : line.at - startedAt,
      code: line === undefined ? 'none' : '1013',
    };
  } finally {
    cluster.kill();
  }
}

const reading = await run(undefined, false);
const bounded = await run(undefined);
const unbounded = await run(1_073_741_824);
const f = (v: number) => v.toFixed(1);
const lines = [
  '# WebSockets: a slow reader',
  '',
  `Measured ${new Date().toISOString()} by \`node --conditions=source reliability/websockets.ts\`: \`flotilla start\`, 2 workers; one client completes the handshake and never reads; ${RATE} messages of 64 KiB a second for ${SECONDS} s are published to its topic (${(RATE * SECONDS * 64) / 1024} MiB). Growth: the workers' summed RSS, peak minus the value before the publishes (sampled every 100 ms). Machine: ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(2)}; shared.`,
  '',
  "| `websockets.maxBufferedBytes` | what happened to the reader | workers' RSS growth |",
  '|---|---|---|',
  `| 1 MiB (default), the client reads | kept | ${f(reading.growthMiB)} MiB |`,
  `| 1 MiB (default) | closed with ${bounded.code}${bounded.closedAfterMs === undefined ? '' : ` after ${Math.round(bounded.closedAfterMs)} ms`} | ${f(bounded.growthMiB)} MiB |`,
  `| 1 GiB (no bound in reach) | ${unbounded.code === 'none' ? 'kept, its unsent messages buffered' : `closed with ${unbounded.code}`} | ${f(unbounded.growthMiB)} MiB |`,
  '',
  "The kernel buffers a few MiB of the stream on loopback (the reader's receive buffer, the worker's",
  'send buffer) before anything queues in the worker; past them the bound closes the reader, and its',
  'frames queued behind go with it (terminated `websockets.closeTimeoutMs` later, since it never reads',
  'the close frame). Without it, every message to the reader stays in the worker until it reads or leaves.',
  '',
];
writeFileSync(join(ROOT, 'reliability/results/websockets.md'), lines.join('\n'));
process.stdout.write(lines.join('\n'));
