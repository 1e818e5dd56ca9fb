/**
 * `node --conditions=source bench/websocket-fanout.ts [--subscribers 1000] [--workers 2]`: fan-out
 * of `app.publish` through a real cluster (`flotilla start`, its default balancing). One client socket
 * publishes (a message on `GET /pub`, carrying its send time); `--subscribers` sockets on `GET /sub`,
 * spread over the workers, receive. All clients live in this process, so the latency is measured on
 * one clock: publish → received, through worker → primary → every worker → socket.
 *
 * - latency: 20 publishes a second for 5 s (p50, p99, max over every delivery);
 * - throughput: 500 publishes sent at once; deliveries per second until the last arrives.
 *
 * Writes bench/results/websockets.md. The clients share the machine with the cluster: on 2 cores
 * the receiving side is part of what is measured.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { ClusterProcess, configYaml } from '../tools/cluster-process.ts';
import { percentile } from './lib/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const SUBSCRIBERS = option('subscribers', 1000);
const WORKERS = option('workers', 2);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVICE = fileURLToPath(new URL('../tools/websocket-fanout-service.ts', import.meta.url));

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

async function openRetrying(url: string): Promise<WebSocket> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await open(url);
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-fanout-'));
  const file = join(dir, 'app.yaml');
  writeFileSync(file, configYaml({ serviceName: 'fanout', service: SERVICE, workers: WORKERS, logging: { requests: false } }, {}));
  const cluster = new ClusterProcess({ cli: join(ROOT, 'src/cli/main.ts'), execArgv: ['--conditions=source'], configFile: file });
  try {
    const { appPort } = await cluster.ready(WORKERS, 30_000);
    const base = `ws://127.0.0.1:${appPort}`;
    const latencies: number[] = [];
    let received = 0;
    let onDelivery: (() => void) | undefined;
    const subscribers: WebSocket[] = [];
    for (let batch = 0; batch < SUBSCRIBERS / 50; batch++) {
      const opened = await Promise.all(Array.from({ length: 50 }, () => openRetrying(`${base}/sub`)));
      for (const socket of opened) {
        socket.on('message', (data) => {
          const sentAt = Number(String(data).slice(0, String(data).indexOf(' ')));
          latencies.push(performance.now() - sentAt);
          received++;
          onDelivery?.();
        });
      }
      subscribers.push(...opened);
    }
    process.stderr.write(`${subscribers.length} subscribers open\n`);
    const publisher = await openRetrying(`${base}/pub`);
    const body = 'x'.repeat(100);
    await new Promise((resolve) => setTimeout(resolve, 500));

    // latency at a steady, low rate
    const rate = 20;
    const seconds = 5;
    for (let i = 0; i < rate * seconds; i++) {
      publisher.send(`${performance.now()} ${body}`);
      await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
    }
    const expected = rate * seconds * SUBSCRIBERS;
    for (let waited = 0; received < expected; waited += 50) {
      if (waited > 30_000) throw new Error(`${received} of ${expected} deliveries after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    process.stderr.write(`steady: ${received} deliveries\n`);
    const steady = latencies.slice();

    // throughput: a burst
    latencies.length = 0;
    received = 0;
    const burst = 500;
    const target = burst * SUBSCRIBERS;
    const done = new Promise<void>((resolve) => {
      onDelivery = () => {
        if (received >= target) resolve();
      };
    });
    const started = performance.now();
    for (let i = 0; i < burst; i++) publisher.send(`${performance.now()} ${body}`);
    await done;
    const elapsed = (performance.now() - started) / 1000;
    const perSecond = Math.round(target / elapsed);

    const ms = (v: number) => v.toFixed(1);
    const lines = [
      '# WebSocket fan-out',
      '',
      `Measured ${new Date().toISOString()} by \`node --conditions=source bench/websocket-fanout.ts\`: \`flotilla start\`, ${WORKERS} workers (default balancing), ${SUBSCRIBERS} subscribed sockets spread over the workers, one publishing socket; every client in the bench process (publish and receipt on one clock). Messages of ~120 bytes. Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${loadavg()[0]?.toFixed(2)} at the end; shared, so figures are indicative.`,
      '',
      '| measure | value |',
      '|---|---|',
      `| steady: ${rate} publishes/s for ${seconds} s, deliveries | ${steady.length} |`,
      `| publish → received, p50 | ${ms(percentile(steady, 50))} ms |`,
      `| publish → received, p99 | ${ms(percentile(steady, 99))} ms |`,
      `| publish → received, max | ${ms(Math.max(...steady))} ms |`,
      `| burst: ${burst} publishes at once, deliveries | ${target} in ${elapsed.toFixed(2)} s |`,
      `| burst: messages delivered per second | ${perSecond} |`,
      `| burst: publish → received, p50 / p99 | ${ms(percentile(latencies, 50))} / ${ms(percentile(latencies, 99))} ms |`,
      '',
      'The path of each message: publishing socket → its worker (`app.publish`) → the primary over IPC',
      '(`flotilla:publish`) → every worker (`flotilla:deliver`) → each subscribed socket (`ws` send).',
      'The burst is bounded by the receiving side as much as by the cluster: on 2 cores the bench clients',
      'parse every frame on the same cores the workers send them from.',
      '',
    ];
    writeFileSync(join(ROOT, 'bench/results/websockets.md'), lines.join('\n'));
    process.stdout.write(lines.join('\n'));
    publisher.close();
    for (const socket of subscribers) socket.terminate();
  } finally {
    cluster.kill();
  }
}

await main();
