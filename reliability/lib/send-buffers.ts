import { execFile } from 'node:child_process';

/** The server's side of the connections to one port at one moment, from `ss -tmn`: per socket, in bytes. */
export interface SendBuffers {
  /** Sockets seen (any state but LISTEN). */
  sockets: number;
  /** Send buffer sizes (`skmem` `tb`: what the kernel lets the socket queue; autotuned up to tcp_wmem[2]). */
  sizes: number[];
  /** Bytes queued for sending (`skmem` `w`), not yet acknowledged. */
  queued: number[];
}

/**
 * Samples the server's side of the connections to `port` with `ss -tmn` every
 * `everyMs` (asynchronously: the probe shares this event loop) and keeps the
 * sample with the most bytes queued. `ss` sees this network namespace: the
 * server's.
 */
export class SendBufferSampler {
  #peak: SendBuffers | undefined;
  readonly #timer: NodeJS.Timeout;
  #running: Promise<void> = Promise.resolve();

  constructor(port: number, everyMs = 1_000) {
    this.#timer = setInterval(() => {
      this.#running = sample(port).then((s) => {
        if (s !== undefined && sum(s.queued) >= sum(this.#peak?.queued ?? [])) this.#peak = s;
      });
    }, everyMs);
  }

  async stop(): Promise<SendBuffers | undefined> {
    clearInterval(this.#timer);
    await this.#running;
    return this.#peak;
  }
}

function sample(port: number): Promise<SendBuffers | undefined> {
  return new Promise((resolve) => {
    execFile('ss', ['-tmnH', 'sport', '=', `:${port}`], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return resolve(undefined);
      const sizes: number[] = [];
      const queued: number[] = [];
      for (const [, skmem = ''] of stdout.matchAll(/skmem:\(([^)]*)\)/g)) {
        const field = (name: string) => Number(new RegExp(`(?:^|,)${name}(\\d+)`).exec(skmem)?.[1] ?? Number.NaN);
        sizes.push(field('tb'));
        queued.push(field('w'));
      }
      resolve({ sockets: sizes.length, sizes, queued });
    });
  });
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
