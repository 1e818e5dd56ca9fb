import { type ClientHttp2Session, constants, connect as h2connect } from 'node:http2';
import { type Socket, connect as tcpConnect } from 'node:net';
import { type TestContext, test } from 'node:test';
import { H2_MAX_STREAM_ID } from '../../../src/app/transport/h2-goaway.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';

// At shutdown an HTTP/2 connection is closed in the two steps of RFC 9113 §6.8: GOAWAY with the
// largest stream id and a PING; once the PING is acknowledged, GOAWAY with the last stream taken.
// node:http2 takes no new stream once it has sent a GOAWAY (its nghttp2 has no other way to send
// the first one), so a stream that races the first GOAWAY is refused, not served: the second one's
// last stream id tells the client, which retries it. Never a reset with an error, never a hang.

const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7 } as const;
const END_STREAM = 0x1;
const ACK = 0x1;
const REFUSED_STREAM = 0x7;

interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

/**
 * An h2c client that writes its frames by hand, so that it can do what node:http2's client never
 * does: open a stream after a GOAWAY, and hold back a PING's acknowledgement.
 */
class RawH2 {
  readonly frames: Frame[] = [];
  readonly closed: Promise<void>;
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #cursor = 0;
  #waiting: (() => void) | undefined;

  constructor(socket: Socket) {
    this.#socket = socket;
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      while (this.#buffer.length >= 9) {
        const length = this.#buffer.readUIntBE(0, 3);
        if (this.#buffer.length < 9 + length) break;
        const frame = {
          type: this.#buffer[3] as number,
          flags: this.#buffer[4] as number,
          stream: this.#buffer.readUInt32BE(5) & H2_MAX_STREAM_ID,
          payload: this.#buffer.subarray(9, 9 + length),
        };
        this.#buffer = this.#buffer.subarray(9 + length);
        // the server's settings are acknowledged, as every client must
        if (frame.type === FRAME.SETTINGS && (frame.flags & ACK) === 0) this.send(FRAME.SETTINGS, ACK, 0, Buffer.alloc(0));
        this.frames.push(frame);
      }
      this.#waiting?.();
    });
    socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    this.send(FRAME.SETTINGS, 0, 0, Buffer.alloc(0));
  }

  static open(port: number): Promise<RawH2> {
    return new Promise((resolve, reject) => {
      const socket = tcpConnect(port, '127.0.0.1', () => resolve(new RawH2(socket)));
      socket.once('error', reject);
    });
  }

  send(type: number, flags: number, stream: number, payload: Buffer): void {
    const head = Buffer.alloc(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream, 5);
    this.#socket.write(Buffer.concat([head, payload]));
  }

  /** A GET without a body on `stream` (HPACK: static-table names, literal values, no Huffman). */
  get(stream: number, path: string): void {
    const literal = (index: number, value: string) => Buffer.concat([Buffer.from([index, value.length]), Buffer.from(value)]);
    const block = Buffer.concat([Buffer.from([0x82, 0x86]), literal(0x04, path), literal(0x01, 'localhost')]);
    this.send(FRAME.HEADERS, END_STREAM | 0x4, stream, block);
  }

  /** The next frame (after those already taken) that `match` accepts. */
  async next(match: (frame: Frame) => boolean): Promise<Frame> {
    for (;;) {
      while (this.#cursor < this.frames.length) {
        const frame = this.frames[this.#cursor++] as Frame;
        if (match(frame)) return frame;
      }
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

const goawayOf = (frame: Frame) => ({
  lastStreamId: frame.payload.readUInt32BE(0) & H2_MAX_STREAM_ID,
  code: frame.payload.readUInt32BE(4),
});

/** An h2c App with `/slow`, held until `release`, and `/fast`. */
async function slowApp(t: TestContext) {
  const release = gate();
  const entered = gate();
  const { app } = testApp({ http2: true, logging: { level: 'silent' } });
  app.registerController(
    controller(
      {
        method: 'GET',
        path: '/slow',
        handler: async () => {
          entered.resolve();
          await release.promise;
          return { slow: true };
        },
      },
      { method: 'GET', path: '/fast', handler: () => ({ fast: true }) },
    ),
  );
  const port = await serve(t, app);
  return { app, port, release, entered };
}

test('shutdown: GOAWAY(2^31-1) and a PING, then GOAWAY(last stream); streams that race them are refused, the open one completes', async (t: TestContext) => {
  const { app, port, release, entered } = await slowApp(t);
  const client = await RawH2.open(port);
  t.after(() => client.destroy());
  client.get(1, '/slow');
  await entered.promise;

  const closing = app.close();
  const first = await client.next((f) => f.type === FRAME.GOAWAY);
  t.assert.deepStrictEqual(goawayOf(first), { lastStreamId: H2_MAX_STREAM_ID, code: 0 });
  const ping = await client.next((f) => f.type === FRAME.PING && (f.flags & ACK) === 0);
  // a request the client sent before it read the first GOAWAY: it reaches the server before the PING's ack
  client.get(3, '/fast');
  client.send(FRAME.PING, ACK, 0, ping.payload);
  const second = await client.next((f) => f.type === FRAME.GOAWAY);
  t.assert.deepStrictEqual(goawayOf(second), { lastStreamId: 1, code: 0 }, 'the last stream taken: the one in flight');

  // a stream after the second GOAWAY (a client that ignores it)
  client.get(5, '/fast');
  release.resolve();
  await client.closed;
  await closing;

  const on = (stream: number) => client.frames.filter((f) => f.stream === stream);
  const inFlight = on(1);
  // 0x88: `:status: 200` from HPACK's static table
  t.assert.strictEqual(inFlight.find((f) => f.type === FRAME.HEADERS)?.payload[0], 0x88, 'the stream in flight answered 200');
  t.assert.ok(
    inFlight.some((f) => f.type === FRAME.DATA && (f.flags & END_STREAM) !== 0),
    'and ended',
  );
  t.assert.ok(!inFlight.some((f) => f.type === FRAME.RST_STREAM), 'not reset');
  for (const stream of [3, 5]) {
    // refused: above the last stream id of the GOAWAY, unanswered, or reset with REFUSED_STREAM
    t.assert.ok(!on(stream).some((f) => f.type === FRAME.HEADERS || f.type === FRAME.DATA), `stream ${stream} not served`);
    for (const reset of on(stream).filter((f) => f.type === FRAME.RST_STREAM))
      t.assert.strictEqual(reset.payload.readUInt32BE(0), REFUSED_STREAM, `stream ${stream} refused`);
  }
  // node:http2 repeats the last GOAWAY as it closes the connection
  const goaways = client.frames.filter((f) => f.type === FRAME.GOAWAY).map(goawayOf);
  t.assert.deepStrictEqual(goaways.slice(1), Array(goaways.length - 1).fill({ lastStreamId: 1, code: 0 }), 'no GOAWAY with an error');
});

test('shutdown: a node:http2 client sees GOAWAY, its slow stream completes; one it opens as the GOAWAY comes is served or refused', async (t: TestContext) => {
  const { app, port, release, entered } = await slowApp(t);
  const session = h2connect(`http://127.0.0.1:${port}`);
  t.after(() => session.destroy());
  const goaways: { code: number; lastStreamId: number }[] = [];
  let closedAtGoaway = false;
  session.on('goaway', (code: number, lastStreamId: number) => {
    goaways.push({ code, lastStreamId });
    closedAtGoaway ||= session.closed;
    if (lastStreamId !== H2_MAX_STREAM_ID) release.resolve();
  });
  const slow = outcome(session, '/slow');
  await entered.promise;
  const closing = app.close();
  // sent before the client has read the first GOAWAY: the server may have sent it already, or not
  const racing = outcome(session, '/fast');
  t.assert.deepStrictEqual(await slow, { status: 200, body: '{"slow":true}' });
  const raced = await racing;
  t.assert.ok(
    'status' in raced ? raced.status === 200 : raced.reset === constants.NGHTTP2_REFUSED_STREAM,
    `served or refused: ${JSON.stringify(raced)}`,
  );
  await closing;
  t.assert.deepStrictEqual(goaways[0], { code: 0, lastStreamId: H2_MAX_STREAM_ID }, 'first: the largest stream id');
  const last = 'status' in raced ? 3 : 1;
  t.assert.deepStrictEqual(goaways.slice(1), Array(goaways.length - 1).fill({ code: 0, lastStreamId: last }), 'then the last stream taken');
  t.assert.strictEqual(closedAtGoaway, true, 'the client opens no new stream from the first GOAWAY on');
});

/** A stream's end: its status and body, or the code it was reset with. */
function outcome(session: ClientHttp2Session, path: string): Promise<{ status: number; body: string } | { reset: number }> {
  return new Promise((resolve) => {
    const stream = session.request({ ':path': path });
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.on('data', (chunk: string) => {
      body += chunk;
    });
    stream.on('error', () => {});
    stream.on('close', () => resolve(status === 0 ? { reset: stream.rstCode ?? -1 } : { status, body }));
  });
}
