import type { ServerResponse } from 'node:http';

/**
 * The reason `ctx.context().signal` aborts with when the client closes the connection (or half-closes
 * it: node:http then closes it) before the response is complete; also what the pipeline throws when it
 * finds the client gone before reading a request's body (`beforeHandler`: the handler is not run).
 *
 * @example
 * const signal = ctx.context().signal;
 * signal.addEventListener('abort', () => {
 *   if (signal.reason instanceof ClientGoneError) cache.cancel(key); // nobody is waiting any more
 * });
 */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
  /** Thrown by flotilla before the route's handler started, which then does not run. */
  readonly beforeHandler: boolean;

  constructor(beforeHandler = false) {
    super('client closed the connection');
    this.beforeHandler = beforeHandler;
  }
}

/**
 * Whether the client is gone: the connection closed before the response was complete. A half-close
 * (the client's FIN, which nginx also treats as an abort) counts: node:http destroys the response then.
 *
 * @example
 * if (clientGone(ctx.res)) return; // nobody to answer: do not start the work
 */
export function clientGone(res: ServerResponse): boolean {
  return res.destroyed && !res.writableFinished;
}

/**
 * Whether `error` is an abort caused by the client leaving: the signal's own reason, an `AbortError`
 * (what `fetch`, timers and streams reject with when their signal aborts), or a reset or premature
 * close of the request, itself or as the cause of what was thrown. A handler failing with one of these
 * after its client left has not failed: nobody is waiting for its answer.
 *
 * @example
 * if (clientGone(ctx.res) && abortedByClient(error)) return; // not a failure of the server's
 */
export function abortedByClient(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof ClientGoneError) return true;
    const { name, code } = current as { name?: unknown; code?: unknown };
    if (name === 'AbortError' || code === 'ABORT_ERR' || code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
