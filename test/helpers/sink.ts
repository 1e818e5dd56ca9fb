import { Writable } from 'node:stream';

/** A log destination that keeps every pino line, parsed. */
export interface LogSink extends Writable {
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first line (already written or yet to come) that matches. */
  waitFor(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

export function sink(): LogSink {
  const lines: Record<string, unknown>[] = [];
  const waiters: { predicate: (line: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buffered = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const line = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.predicate(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
        newline = buffered.indexOf('\n');
      }
      callback();
    },
  }) as LogSink;
  Object.defineProperty(stream, 'lines', { value: lines });
  stream.waitFor = (predicate) => {
    const found = lines.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => waiters.push({ predicate, resolve }));
  };
  return stream;
}
