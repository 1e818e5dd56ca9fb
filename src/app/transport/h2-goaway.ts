import type { ServerHttp2Session } from 'node:http2';

/** The largest stream id (RFC 9113 §5.1.1): a GOAWAY carrying it refuses no stream the client sent. */
export const H2_MAX_STREAM_ID = 2 ** 31 - 1;

/** NGHTTP2_NO_ERROR: a graceful shutdown (RFC 9113 §7). */
const H2_NO_ERROR = 0;

/**
 * How long the client gets to see the first GOAWAY when its PING acknowledgement does not come
 * sooner (a client that does not answer PINGs, or one far away).
 */
export const GOAWAY_NOTICE_MS = 1_000;

/**
 * Closes an HTTP/2 session gracefully, in the two steps of RFC 9113 §6.8, and resolves once it has
 * closed:
 * 1. a GOAWAY with NO_ERROR and the largest stream id: the client opens no new stream from now on,
 *    and none of those it already sent is refused; a PING follows it;
 * 2. once the client acknowledged that PING (one round trip: every stream it sent before it saw the
 *    first GOAWAY has arrived by then), or after `noticeMs`, `session.close()`: a second GOAWAY with
 *    the id of the last stream the server took. The streams up to it finish; a stream after it is
 *    refused (node:http2 answers REFUSED_STREAM, and a client reading the GOAWAY takes any stream
 *    above the id for refused), which a client retries on another connection.
 * The session closes once its last stream has ended (the shutdown's budget bounds that).
 *
 * @example
 * await goAway(session); // GOAWAY(2^31-1), PING, ack, GOAWAY(last id), streams end, closed
 */
export function goAway(session: ServerHttp2Session, noticeMs = GOAWAY_NOTICE_MS): Promise<void> {
  if (session.destroyed) return Promise.resolve();
  const going = goingAway.get(session);
  if (going !== undefined) return going;
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  goingAway.set(session, closed);
  // closing already (an idle timeout's GOAWAY): it ends on its own
  if (session.closed) return closed;
  session.goaway(H2_NO_ERROR, H2_MAX_STREAM_ID);
  void roundTrip(session, noticeMs).then(() => {
    if (!session.destroyed && !session.closed) session.close();
  });
  return closed;
}

/** The sessions sent the first GOAWAY, and when each has closed: a second call sends nothing more. */
const goingAway = new WeakMap<ServerHttp2Session, Promise<void>>();

/** Resolves when the client acknowledged a PING, after `boundMs`, or when the session ends, whichever comes first. */
function roundTrip(session: ServerHttp2Session, boundMs: number): Promise<void> {
  return new Promise((resolve) => {
    let over = false;
    const done = () => {
      over = true;
      clearTimeout(timer);
      session.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, boundMs);
    session.once('close', done);
    // node:http2 sends a PING ahead of the frames it has not written yet: this one waits until the GOAWAY went out
    const ping = () => {
      if (over || session.destroyed) return;
      if ((session.state.outboundQueueSize ?? 0) > 0) setImmediate(ping);
      // not sent (false) when too many PINGs are unanswered already: the bound decides
      else session.ping(() => done());
    };
    setImmediate(ping);
  });
}
