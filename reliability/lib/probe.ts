import { request } from 'node:http';
import { now } from './clock.ts';

export interface ProbeResult {
  sentAt: number;
  endAt: number;
  status: number;
  pid: number | undefined;
  error: string | undefined;
}

/**
 * A probe client: one `GET path` every `intervalMs`, each on a new TCP
 * connection (`Connection: close`), so each one goes through the primary's
 * accept and round-robin hand-off; a slow answer never delays the next probe.
 */
export class Probe {
  readonly results: ProbeResult[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #pending = new Set<Promise<void>>();
  #stopped = false;

  constructor(port: number, path: string, intervalMs: number, timeoutMs: number, host = '127.0.0.1') {
    this.#timer = setInterval(() => {
      const one = probeOnce(port, path, timeoutMs, host).then((r) => {
        if (!this.#stopped) this.results.push(r);
      });
      this.#pending.add(one);
      void one.finally(() => this.#pending.delete(one));
    }, intervalMs);
  }

  /** Stops probing; waits for the probes in flight (they end at their timeout at the latest). */
  async stop(): Promise<ProbeResult[]> {
    clearInterval(this.#timer);
    await Promise.all(this.#pending);
    this.#stopped = true;
    return this.results;
  }
}

export function probeOnce(port: number, path: string, timeoutMs: number, host = '127.0.0.1'): Promise<ProbeResult> {
  const sentAt = now();
  return new Promise((resolve) => {
    const done = (status: number, body: string, error?: Error) => {
      const e = error as NodeJS.ErrnoException | undefined;
      const match = /"pid":(\d+)/.exec(body);
      resolve({
        sentAt,
        endAt: now(),
        status,
        pid: match === null ? undefined : Number(match[1]),
        error: e === undefined ? undefined : `${e.code ?? e.name}: ${e.message}`,
      });
    };
    const req = request(
      { host, port, path, agent: false, headers: { connection: 'close' }, signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => done(res.statusCode ?? 0, body));
        res.on('error', (error) => done(0, '', error));
      },
    );
    req.on('error', (error) => done(0, '', error));
    req.end();
  });
}
