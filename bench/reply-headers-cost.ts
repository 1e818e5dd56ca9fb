/**
 * What the security headers and compression add to a reply, in-process, on node:http's own
 * `ServerResponse` objects (one per iteration, as per request): the five default security headers
 * (`setSecurityHeaders`), the compression decision for a client that asks for no encoding
 * (`encodingOf`: type, `Vary`, threshold, method, `Accept-Encoding`), and compressing the list
 * route's page (2 KB of JSON) with each encoding as a reply does (`compressSync`; CPU of every
 * thread, collections included). Rounds alternate, medians. `app.inject` is not used: it keeps
 * about 12 KB per request reachable while its App lives, and the collections of a growing heap
 * would swamp what is measured.
 *
 *   node --conditions=source bench/reply-headers-cost.ts
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { compressionOf, compressSync, encodingOf } from '../src/app/compression/compression.ts';
import { securityHeaderList, setSecurityHeaders } from '../src/app/headers/security-headers.ts';
import { DEFAULTS } from '../src/config/defaults.ts';
import { pageOf } from './services/data.ts';

const N = 200_000;
const ROUNDS = 5;
const TYPE = 'application/json; charset=utf-8';

const req = new IncomingMessage(new Socket());
req.method = 'GET';
req.headers = {};
const headers = securityHeaderList(DEFAULTS.securityHeaders);
const compression = compressionOf(DEFAULTS.compression)!;
const page = Buffer.from(JSON.stringify(pageOf(3, 20)));

/** What every reply has anyway: a response with its request id, CORS's Vary and its type. */
function reply(): ServerResponse {
  const res = new ServerResponse(req);
  res.setHeader('X-Request-Id', 'a3f1c2d4-0000-4000-8000-000000000000');
  res.setHeader('Vary', 'Origin');
  res.setHeader('Content-Type', TYPE);
  return res;
}

const work: Record<string, { n: number; run: () => unknown }> = {
  'a reply (the reference)': { n: N, run: () => reply() },
  '+ security headers': { n: N, run: () => setSecurityHeaders(reply(), headers) },
  '+ compression decision, no Accept-Encoding': { n: N, run: () => encodingOf(compression, req, reply(), 200, TYPE, page.length) },
  'gzip of the 2 KB page': { n: N / 20, run: () => compressSync('gzip', page) },
  'br of the 2 KB page': { n: N / 20, run: () => compressSync('br', page) },
  'zstd of the 2 KB page': { n: N / 20, run: () => compressSync('zstd', page) },
};

const wallNs: Record<string, number[]> = Object.fromEntries(Object.keys(work).map((name) => [name, []]));
const cpuNs: Record<string, number[]> = Object.fromEntries(Object.keys(work).map((name) => [name, []]));
for (let round = 0; round <= ROUNDS; round++) {
  const names = Object.keys(work);
  if (round % 2 === 1) names.reverse();
  for (const name of names) {
    const { n, run } = work[name]!;
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) run();
    const wall = Number(process.hrtime.bigint() - started) / n;
    const used = process.cpuUsage(cpu);
    // round 0 warms the JIT up
    if (round === 0) continue;
    wallNs[name]!.push(wall);
    cpuNs[name]!.push(((used.user + used.system) * 1000) / n);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
// CPU, not wall time, for what is added: a busy machine stretches the wall time of everything
const reference = median(cpuNs['a reply (the reference)']!);
console.log(`page: ${page.length} bytes; ${ROUNDS} rounds, medians`);
for (const name of Object.keys(work)) {
  const cpu = median(cpuNs[name]!);
  const added = name.startsWith('+') ? `  (+${(cpu - reference).toFixed(0)} ns CPU)` : '';
  console.log(`${name.padEnd(44)} ${median(wallNs[name]!).toFixed(0).padStart(7)} ns wall, ${cpu.toFixed(0).padStart(7)} ns CPU${added}`);
}
