import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * wrk's script: every `REL_FAIL_EVERY`-th request asks `/work?fail=1` (a
 * planned 500, recognised by its "planned failure" detail); every response is
 * classified; `delay()` spaces a connection's requests by `REL_DELAY_MS`
 * (fractional: rounded up or down at random, so the mean is right).
 */
const SCRIPT = `
local fail_every = tonumber(os.getenv("REL_FAIL_EVERY") or "0")
local delay_ms = tonumber(os.getenv("REL_DELAY_MS") or "0")
local path = os.getenv("REL_PATH") or "/work"
local base = math.floor(delay_ms)
local frac = delay_ms - base
local threads = {}
counter, ok, planned, planned500, unexpected5xx, other = 0, 0, 0, 0, 0, 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time())
end

function request()
  counter = counter + 1
  if fail_every > 0 and counter % fail_every == 0 then
    planned = planned + 1
    return wrk.format("GET", path .. "?fail=1")
  end
  return wrk.format("GET", path)
end

function delay()
  if delay_ms <= 0 then return 0 end
  if math.random() < frac then return base + 1 end
  return base
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  elseif status == 500 and body ~= nil and string.find(body, "planned failure", 1, true) then
    planned500 = planned500 + 1
  elseif status >= 500 then
    unexpected5xx = unexpected5xx + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t = { ok = 0, planned = 0, planned500 = 0, unexpected5xx = 0, other = 0 }
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do t[k] = t[k] + (thread:get(k) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'REL_JSON {"requests":%d,"duration_us":%d,"ok":%d,"planned":%d,"planned500":%d,"unexpected5xx":%d,"other":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, t.ok, t.planned, t.planned500, t.unexpected5xx, t.other,
    e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99), latency.max))
end
`;

export interface WrkOptions {
  port: number;
  path: string;
  connections: number;
  durationS: number;
  /** Mean pause of each connection between a response and its next request (0 = closed loop). */
  delayMs?: number;
  /** Every n-th request is a planned failure (`?fail=1`); 0 = none. */
  failEvery?: number;
}

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  ok: number;
  /** Requests sent as planned failures, and those answered by the planned 500. */
  planned: number;
  planned500: number;
  /** 5xx responses that were not the planned failure. */
  unexpected5xx: number;
  /** Other non-200 responses. */
  other: number;
  /** Socket-level errors (no response): connect, read, write, timeout. */
  socketErrors: { connect: number; read: number; write: number; timeout: number };
  latencyMs: { p50: number; p99: number; max: number };
}

/** One wrk run (one thread, keep-alive connections) with the classifying script. */
export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-wrk-'));
  const script = join(dir, 'reliability.lua');
  writeFileSync(script, SCRIPT);
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '5s', '-s', script, `http://127.0.0.1:${o.port}${o.path}`];
  const env = { ...process.env, REL_FAIL_EVERY: String(o.failEvery ?? 0), REL_DELAY_MS: String(o.delayMs ?? 0), REL_PATH: o.path };
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))));
    });
    const line = out.split('\n').find((l) => l.startsWith('REL_JSON '));
    if (line === undefined) throw new Error(`wrk printed no result:\n${out}`);
    const raw = JSON.parse(line.slice('REL_JSON '.length)) as Record<string, number>;
    const n = (k: string) => raw[k] ?? 0;
    const durationS = n('duration_us') / 1e6;
    return {
      requests: n('requests'),
      durationS,
      rps: n('requests') / durationS,
      ok: n('ok'),
      planned: n('planned'),
      planned500: n('planned500'),
      unexpected5xx: n('unexpected5xx'),
      other: n('other'),
      socketErrors: { connect: n('connect'), read: n('read'), write: n('write'), timeout: n('timeout') },
      latencyMs: { p50: n('p50_us') / 1000, p99: n('p99_us') / 1000, max: n('max_us') / 1000 },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
