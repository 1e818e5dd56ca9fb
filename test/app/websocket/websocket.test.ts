import { connect } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { WebSocket } from 'ws';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { upgradeOutcome } from '../../helpers/websocket.ts';

/** A client socket's open, or the HTTP answer that refused it (status, headers, body). */
function open(url: string, options: { protocols?: string[]; headers?: Record<string, string>; maxPayload?: number } = {}) {
  const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
  // messages sent right after the handshake may arrive with it, before the test attaches its listener
  const inbox: string[] = [];
  const waiting: ((message: string) => void)[] = [];
  socket.on('message', (data) => {
    const next = waiting.shift();
    if (next !== undefined) next(String(data));
    else inbox.push(String(data));
  });
  inboxes.set(socket, { inbox, waiting });
  return upgradeOutcome(socket);
}

async function opened(url: string, options?: Parameters<typeof open>[1]): Promise<WebSocket> {
  const result = await open(url, options);
  if (!('socket' in result)) throw new Error(`refused: ${result.status} ${result.body}`);
  return result.socket;
}

const inboxes = new WeakMap<WebSocket, { inbox: string[]; waiting: ((message: string) => void)[] }>();

function nextMessage(socket: WebSocket): Promise<string> {
  const box = inboxes.get(socket);
  if (box === undefined) throw new Error('not a socket of open()');
  const queued = box.inbox.shift();
  if (queued !== undefined) return Promise.resolve(queued);
  return new Promise((resolve) => box.waiting.push(resolve));
}

function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
}

/** Writes a raw request and reads the whole answer (the server closes the connection after it). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

const UPGRADE = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`;

describe('websocket routes', () => {
  test('the route runs with the socket and a ctx that holds params, query, state and request id', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/echo/:room',
        middlewares: [
          async (ctx, next) => {
            ctx.state['user'] = 'ada';
            await next();
          },
        ],
        websocket: (socket, ctx) => {
          socket.on('message', (data) =>
            socket.send(`${ctx.params['room']}/${String(ctx.query['q'])}/${String(ctx.state['user'])}: ${String(data)}`),
          );
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/echo/lobby?q=1`);
    const reply = nextMessage(socket);
    socket.send('hi');
    t.assert.strictEqual(await reply, 'lobby/1/ada: hi');
    socket.close();
  });

  test('an onRequest hook answers 401 before the upgrade, as a problem', async (t: TestContext) => {
    const { app } = testApp();
    let opened = 0;
    app.registerController(
      controller({
        method: 'GET',
        path: '/private',
        onRequest: [
          (ctx) => {
            if (ctx.headers.authorization !== 'Bearer ok') throw KError.unauthorized('who are you?');
          },
        ],
        websocket: () => {
          opened++;
        },
      }),
    );
    const port = await serve(t, app);
    const refused = await open(`ws://127.0.0.1:${port}/private`);
    t.assert.ok('status' in refused);
    t.assert.strictEqual(refused.status, 401);
    t.assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
    t.assert.strictEqual(JSON.parse(refused.body).code, 'UNAUTHORIZED');
    const socket = await (async () => {
      const result = await open(`ws://127.0.0.1:${port}/private`, { headers: { authorization: 'Bearer ok' } });
      return 'socket' in result ? result.socket : undefined;
    })();
    t.assert.ok(socket);
    socket.close();
    t.assert.strictEqual(opened, 1);
  });

  test('params validation answers 400 before the upgrade', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/rooms/:id',
        schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } },
        websocket: () => {},
      }),
    );
    const port = await serve(t, app);
    const refused = await open(`ws://127.0.0.1:${port}/rooms/abc`);
    t.assert.ok('status' in refused);
    t.assert.strictEqual(refused.status, 400);
  });

  test('a plain GET to a websocket-only route is answered 426; one with a handler runs it', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/feed', websocket: () => {} },
        { method: 'GET', path: '/both', handler: () => ({ plain: true }), websocket: () => {} },
      ),
    );
    const feed = await app.inject({ method: 'GET', url: '/feed' });
    t.assert.strictEqual(feed.statusCode, 426);
    t.assert.strictEqual(feed.headers['upgrade'], 'websocket');
    t.assert.strictEqual(feed.json().code, 'UPGRADE_REQUIRED');
    const both = await app.inject({ method: 'GET', url: '/both' });
    t.assert.deepStrictEqual(both.json(), { plain: true });
  });

  test('a route that is not a websocket route answers an upgrade request normally, then closes', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/json', handler: () => ({ ok: true }) }));
    const port = await serve(t, app);
    const answer = await raw(port, UPGRADE('/json'));
    t.assert.match(answer, /^HTTP\/1\.1 200 OK/);
    t.assert.match(answer, /connection: close/i);
    t.assert.match(answer, /\{"ok":true\}$/);
    const missing = await raw(port, UPGRADE('/nowhere'));
    t.assert.match(missing, /^HTTP\/1\.1 404/);
  });

  test('websocket is refused on other methods and must be a function', (t: TestContext) => {
    const { app } = testApp();
    t.assert.throws(
      () => app.registerController(controller({ method: 'POST', path: '/x', handler: () => {}, websocket: () => {} })),
      /FLO_ERR_BAD_ROUTE_OPTION|websocket is for GET routes/,
    );
    t.assert.throws(
      () => app.registerController(controller({ method: 'GET', path: '/y', protocols: ['a b'], websocket: () => {} })),
      /protocols must be tokens/,
    );
  });

  test('a message larger than websockets.maxMessageBytes closes the socket with 1009', async (t: TestContext) => {
    const { app } = testApp({ websockets: { maxMessageBytes: 1024 } });
    app.registerController(
      controller({
        method: 'GET',
        path: '/ws',
        websocket: (socket) => {
          socket.on('message', () => {});
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    const done = closed(socket);
    socket.send('x'.repeat(2048));
    t.assert.strictEqual((await done).code, 1009);
  });

  test('beyond websockets.maxConnections the upgrade is answered 503 TOO_MANY_WEBSOCKETS', async (t: TestContext) => {
    const { app } = testApp({ websockets: { maxConnections: 1 } });
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const port = await serve(t, app);
    const first = await opened(`ws://127.0.0.1:${port}/ws`);
    const second = await open(`ws://127.0.0.1:${port}/ws`);
    t.assert.ok('status' in second);
    t.assert.strictEqual(second.status, 503);
    t.assert.strictEqual(JSON.parse(second.body).code, 'TOO_MANY_WEBSOCKETS');
    t.assert.strictEqual(second.headers['retry-after'], '1');
    first.close();
  });

  test('subprotocols: the first offered that the route speaks is selected; an unknown one is a 400', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/chat', protocols: ['chat.v2', 'chat.v1'], websocket: () => {} },
        { method: 'GET', path: '/plain', websocket: () => {} },
      ),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/chat`, { protocols: ['chat.v1', 'chat.v2'] });
    t.assert.strictEqual(socket.protocol, 'chat.v1');
    socket.close();
    const unknown = await open(`ws://127.0.0.1:${port}/chat`, { protocols: ['mqtt'] });
    t.assert.ok('status' in unknown);
    t.assert.strictEqual(unknown.status, 400);
    t.assert.strictEqual(JSON.parse(unknown.body).code, 'UNSUPPORTED_SUBPROTOCOL');
    const none = await open(`ws://127.0.0.1:${port}/plain`, { protocols: ['mqtt'] });
    t.assert.ok('status' in none);
    t.assert.strictEqual(none.status, 400);
  });

  test('bad upgrade headers are answered with a problem, never a crash', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const port = await serve(t, app);
    const badKey = await raw(port, UPGRADE('/ws').replace('dGhlIHNhbXBsZSBub25jZQ==', 'short'));
    t.assert.match(badKey, /^HTTP\/1\.1 400/);
    t.assert.match(badKey, /"code":"BAD_UPGRADE"/);
    const badVersion = await raw(port, UPGRADE('/ws').replace('Version: 13', 'Version: 7'));
    t.assert.match(badVersion, /^HTTP\/1\.1 426/);
    t.assert.match(badVersion, /sec-websocket-version: 13/i);
    const notWebSocket = await raw(port, UPGRADE('/ws').replace('Upgrade: websocket', 'Upgrade: h2c'));
    t.assert.match(notWebSocket, /^HTTP\/1\.1 400/);
    const badProtocol = await raw(port, UPGRADE('/ws', 'Sec-WebSocket-Protocol: a b, {}\r\n'));
    t.assert.match(badProtocol, /^HTTP\/1\.1 400/);
    // still serving
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    socket.close();
  });

  test('ctx.subscribe and app.publish: text, binary and JSON reach the subscribers only', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/topics/:name',
        websocket: (socket, ctx) => {
          ctx.subscribe(String(ctx.params['name']));
          socket.send('ready');
        },
      }),
    );
    const port = await serve(t, app);
    const books = await opened(`ws://127.0.0.1:${port}/topics/books`);
    const other = await opened(`ws://127.0.0.1:${port}/topics/other`);
    await Promise.all([nextMessage(books), nextMessage(other)]);
    let strays = 0;
    other.on('message', () => strays++);
    const received: unknown[] = [];
    books.on('message', (data, binary) => received.push(binary ? [...(data as Buffer)] : String(data)));
    app.publish('books', 'text');
    app.publish('books', Buffer.from([1, 2, 3]));
    app.publish('books', { id: 7 });
    while (received.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    t.assert.deepStrictEqual(received, ['text', [1, 2, 3], '{"id":7}']);
    t.assert.strictEqual(strays, 0);
    t.assert.throws(() => app.publish('', 'x'), /topic/);
    t.assert.throws(() => app.publish('books', 'x'.repeat(2_000_000)), /maxMessageBytes/);
    books.close();
    other.close();
  });

  test('ctx.subscribe outside a websocket route throws', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/x', handler: (ctx) => ctx.subscribe('t') }));
    const res = await app.inject({ method: 'GET', url: '/x' });
    t.assert.strictEqual(res.statusCode, 500);
  });

  test('a websocket function that throws closes its socket with 1011', async (t: TestContext) => {
    const { app, logs } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/broken',
        websocket: async () => {
          throw new Error('boom');
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/broken`);
    t.assert.strictEqual((await closed(socket)).code, 1011);
    t.assert.ok(logs.lines.some((line) => line['msg'] === 'websocket handler failed'));
  });

  test('a closed socket leaves one log line with its code and duration, and the request line says 101', async (t: TestContext) => {
    const { app, logs } = testApp();
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    socket.close(4000, 'bye');
    await closed(socket);
    while (!logs.lines.some((line) => line['msg'] === 'websocket closed')) await new Promise((resolve) => setTimeout(resolve, 5));
    const line = logs.lines.find((l) => l['msg'] === 'websocket closed');
    t.assert.strictEqual(line?.['code'], 4000);
    t.assert.strictEqual(typeof line?.['durationMs'], 'number');
    t.assert.strictEqual(line?.['route'], '/ws');
    t.assert.ok(logs.lines.some((l) => l['route'] === '/ws' && l['status'] === 101));
  });

  test('ctx.context().signal aborts when the socket closes', async (t: TestContext) => {
    const { app } = testApp();
    const aborted = Promise.withResolvers<void>();
    app.registerController(
      controller({
        method: 'GET',
        path: '/ws',
        websocket: (_socket, ctx) => {
          ctx.context().signal.addEventListener('abort', () => aborted.resolve());
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    socket.close();
    await aborted.promise;
    t.assert.ok(true);
  });

  test('draining closes every socket with 1001, and close() waits for them', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const listening = app.listen();
    const { port } = await app.ready();
    const sockets = await Promise.all(Array.from({ length: 20 }, () => opened(`ws://127.0.0.1:${port}/ws`)));
    const codes = Promise.all(sockets.map((s) => closed(s)));
    await app.close();
    await listening;
    const results = await codes;
    t.assert.ok(results.every((r) => r.code === 1001 && r.reason === 'server going away'));
  });

  test('a peer that does not complete the closing handshake is terminated after closeTimeoutMs', async (t: TestContext) => {
    const { app } = testApp({ websockets: { closeTimeoutMs: 100 } });
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const listening = app.listen();
    const { port } = await app.ready();
    // a raw client: it completes the handshake, then never answers a close frame
    const answer = Promise.withResolvers<void>();
    const socket = connect(port, '127.0.0.1', () => socket.write(UPGRADE('/ws')));
    socket.once('data', () => answer.resolve());
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    await answer.promise;
    const started = performance.now();
    await app.close();
    await listening;
    await gone;
    t.assert.ok(performance.now() - started < 5_000);
  });

  test('a dead peer (no pong) is terminated by the keepalive', async (t: TestContext) => {
    const { app, logs } = testApp({ websockets: { pingIntervalMs: 50 } });
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: () => {} }));
    const port = await serve(t, app);
    const answer = Promise.withResolvers<void>();
    const socket = connect(port, '127.0.0.1', () => socket.write(UPGRADE('/ws')));
    socket.once('data', () => answer.resolve());
    socket.on('error', () => {});
    await answer.promise;
    // never answers the pings
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    t.assert.ok(logs.lines.some((l) => l['msg'] === 'websocket terminated: no pong to the last ping'));
  });

  test('a slow consumer is closed with 1013 instead of buffering without bound', async (t: TestContext) => {
    const { app, logs } = testApp({ websockets: { maxBufferedBytes: 65_536 } });
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: (_socket, ctx) => ctx.subscribe('firehose') }));
    const port = await serve(t, app);
    const answer = Promise.withResolvers<void>();
    // a raw client that reads the handshake, then stops reading
    const socket = connect(port, '127.0.0.1', () => socket.write(UPGRADE('/ws')));
    socket.once('data', () => {
      socket.pause();
      answer.resolve();
    });
    socket.on('error', () => {});
    await answer.promise;
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && !logs.lines.some((l) => l['msg'] === 'websocket closed: slow consumer'); i++) {
      app.publish('firehose', chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    t.assert.ok(logs.lines.some((l) => l['msg'] === 'websocket closed: slow consumer'));
    socket.destroy();
  });
});

describe('websocket routes in the OpenAPI document', () => {
  test('are marked x-websocket with their subprotocols, a 101 and, without a handler, a 426', (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/feed', protocols: ['v1'], summary: 'Live feed', websocket: () => {} },
        { method: 'GET', path: '/both', handler: () => 1, websocket: () => {} },
        { method: 'GET', path: '/plain', handler: () => 1 },
      ),
    );
    const paths = app.openapi().paths as Record<string, Record<string, Record<string, unknown>>>;
    const feed = paths['/feed']?.['get'];
    t.assert.deepStrictEqual(feed?.['x-websocket'], { protocols: ['v1'] });
    const responses = feed?.['responses'] as Record<string, unknown>;
    t.assert.ok(responses['101']);
    t.assert.ok(responses['426']);
    t.assert.match(String((responses['403'] as { description?: string } | undefined)?.description), /`CROSS_ORIGIN_REQUEST`/);
    t.assert.ok(!('200' in responses));
    const both = paths['/both']?.['get']?.['responses'] as Record<string, unknown>;
    t.assert.ok(both['101'] && !('426' in both));
    t.assert.strictEqual(paths['/plain']?.['get']?.['x-websocket'], undefined);
    const plain = paths['/plain']?.['get']?.['responses'] as Record<string, unknown>;
    t.assert.ok(!('403' in plain), 'a plain GET is never refused');
  });
});

describe('malformed frames', () => {
  test('invalid UTF-8 in a text frame closes with 1007, an unmasked client frame with 1002; the App keeps serving', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/ws', websocket: (socket) => void socket.on('message', () => {}) }));
    const port = await serve(t, app);
    /** Sends one frame after the handshake and returns the close code the server sends (its close frame's first 2 payload bytes). */
    const closeCodeFor = (frame: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(UPGRADE('/ws')));
        let data = Buffer.alloc(0);
        let upgraded = false;
        socket.on('data', (chunk: Buffer) => {
          data = Buffer.concat([data, chunk]);
          if (!upgraded) {
            const end = data.indexOf('\r\n\r\n');
            if (end === -1) return;
            upgraded = true;
            data = data.subarray(end + 4);
            socket.write(frame);
          }
          // a close frame: 0x88, length, 2-byte code
          if (data.length >= 4 && data[0] === 0x88) {
            resolve(data.readUInt16BE(2));
            socket.destroy();
          }
        });
        socket.on('error', reject);
      });
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = (payload: Buffer) =>
      Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ (mask[i % 4] as number))]);
    t.assert.strictEqual(await closeCodeFor(masked(Buffer.from([0xff, 0xfe, 0xfd]))), 1007);
    t.assert.strictEqual(await closeCodeFor(Buffer.from([0x81, 0x02, 0x68, 0x69])), 1002);
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    socket.close();
  });
});

describe('websocket metrics', () => {
  test('connections, messages in and out, and publishes by declared topic (the others as "other")', async (t: TestContext) => {
    const { app } = testApp({ metrics: { enabled: true }, websockets: { metricTopics: ['news'] } });
    app.registerController(
      controller({
        method: 'GET',
        path: '/ws',
        websocket: (socket, ctx) => {
          ctx.subscribe('news');
          socket.on('message', () => {});
          socket.send('ready');
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await opened(`ws://127.0.0.1:${port}/ws`);
    await nextMessage(socket);
    socket.send('in');
    app.publish('news', 'a');
    app.publish('room:1', 'b');
    await nextMessage(socket);
    const text = await app.registry.metrics();
    t.assert.match(text, /^flotilla_websocket_connections 1$/m);
    t.assert.match(text, /^flotilla_websocket_messages_total\{direction="out"\} 1$/m);
    t.assert.match(text, /^flotilla_websocket_publishes_total\{topic="news"\} 1$/m);
    t.assert.match(text, /^flotilla_websocket_publishes_total\{topic="other"\} 1$/m);
    t.assert.doesNotMatch(text, /room:1/);
    while (!/^flotilla_websocket_messages_total\{direction="in"\} 1$/m.test(await app.registry.metrics()))
      await new Promise((r) => setTimeout(r, 5));
    const done = new Promise((resolve) => socket.once('close', resolve));
    socket.close();
    await done;
    while (!/^flotilla_websocket_connections 0$/m.test(await app.registry.metrics())) await new Promise((r) => setTimeout(r, 5));
  });
});
