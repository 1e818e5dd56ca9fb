/**
 * Server-sent events (the WHATWG `text/event-stream` format): encoding, and
 * the stream of text `ctx.sse(source)` sends — the source's events, comment
 * heartbeats while it is quiet, and a clean end as soon as the App starts
 * draining, so that clients reconnect to another process at once.
 */

/** One event. `data` that is not a string is sent as JSON. */
export interface SseEvent {
  data: unknown;
  /** The event type (`addEventListener(type)` in the browser); `message` when absent. */
  event?: string;
  /** The id the client sends back as `Last-Event-ID` when it reconnects. */
  id?: string;
  /** How long the client waits before reconnecting, in milliseconds. */
  retry?: number;
}

export interface SseOptions {
  /** A comment line is sent after this long without an event, so that proxies keep the connection (default 15 000). */
  heartbeatMs?: number;
  /** Sent when the App starts draining, before the stream ends (default: none, a clean end). */
  farewell?: SseEvent;
}

/** The response headers of an event stream: no caching, no buffering by proxies, no compression. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

export const DEFAULT_HEARTBEAT_MS = 15_000;

/**
 * One event in the wire format. Line breaks in `data` become several `data:`
 * lines; in `event` and `id`, where the format allows none, they are refused.
 *
 * @example
 * encodeEvent({ event: 'price', id: '7', data: { eur: 3 } }); // 'event: price\nid: 7\ndata: {"eur":3}\n\n'
 */
export function encodeEvent(e: SseEvent): string {
  let out = '';
  if (e.event !== undefined) out += `event: ${singleLine(e.event, 'event')}\n`;
  if (e.id !== undefined) out += `id: ${singleLine(e.id, 'id')}\n`;
  if (e.retry !== undefined) {
    if (!Number.isInteger(e.retry) || e.retry < 0) throw new TypeError(`an event's retry must be a non-negative integer, got ${e.retry}`);
    out += `retry: ${e.retry}\n`;
  }
  const data = typeof e.data === 'string' ? e.data : (JSON.stringify(e.data) ?? '');
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

function singleLine(value: string, field: string): string {
  if (/[\r\n\0]/.test(value)) throw new TypeError(`an event's ${field} must be one line without NUL, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * The text of an event stream: a first comment (the head goes out at once),
 * then the source's events, a heartbeat comment after `heartbeatMs` of
 * silence, and the end when the source ends or `draining` aborts (after the
 * `farewell` event, if any). The source is closed whenever the stream ends.
 *
 * @example
 * for await (const text of eventStream(prices(), {}, drainSignal)) res.write(text);
 */
export async function* eventStream(source: AsyncIterable<SseEvent>, options: SseOptions, draining: AbortSignal): AsyncGenerator<string> {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const events = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<SseEvent>> | undefined;
  try {
    yield ': connected\n\n';
    for (;;) {
      pending ??= events.next();
      const wait = pause(heartbeatMs, draining);
      const next = draining.aborted ? 'drain' : await Promise.race([pending, wait.done]).finally(wait.cancel);
      if (next === 'beat') {
        yield ': heartbeat\n\n';
        continue;
      }
      if (next === 'drain') {
        if (options.farewell !== undefined) yield encodeEvent(options.farewell);
        return;
      }
      pending = undefined;
      if (next.done === true) return;
      yield encodeEvent(next.value);
    }
  } finally {
    // an event still awaited when the stream ends must not reject unobserved; and the source is not
    // waited for: an async generator busy in its next() would hold the end of the stream until it yields
    pending?.catch(() => {});
    closeQuietly(events);
  }
}

/**
 * `done` resolves `beat` after `ms`, or `drain` once `draining` aborts, whichever is first; `cancel` drops
 * the timer and the listener. Made afresh for every wait and cancelled after it, so that a long stream,
 * or many of them, leave nothing behind on the App's drain signal.
 */
function pause(ms: number, draining: AbortSignal): { done: Promise<'beat' | 'drain'>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const done = new Promise<'beat' | 'drain'>((resolve) => {
    onAbort = () => resolve('drain');
    timer = setTimeout(() => resolve('beat'), ms);
    draining.addEventListener('abort', onAbort, { once: true });
  });
  return {
    done,
    cancel: () => {
      clearTimeout(timer);
      draining.removeEventListener('abort', onAbort);
    },
  };
}

/** Asks an iterator to finish (`return()`), without waiting for it nor letting it reject unobserved. */
export function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(() => {});
  } catch {
    // a return() that throws has nothing more to close
  }
}
