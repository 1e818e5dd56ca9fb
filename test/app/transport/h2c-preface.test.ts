import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { H2_PREFACE, prefaceOf, sniffPreface } from '../../../src/app/transport/h2c-preface.ts';

test('prefaceOf: the whole preface is h2, a prefix of it is too short to tell, anything else is h1', () => {
  assert.equal(prefaceOf(H2_PREFACE), 'h2');
  assert.equal(prefaceOf(Buffer.concat([H2_PREFACE, Buffer.from([0, 0, 0, 4])])), 'h2');
  assert.equal(prefaceOf(H2_PREFACE.subarray(0, 3)), 'more');
  assert.equal(prefaceOf(Buffer.from('PRI * HTTP/1.1\r\n')), 'h1');
  assert.equal(prefaceOf(Buffer.from('GET / HTTP/1.1\r\n')), 'h1');
  assert.equal(prefaceOf(Buffer.from('P')), 'more');
  assert.equal(prefaceOf(Buffer.from('POST /items HTTP/1.1\r\n')), 'h1');
});

/** A connected pair: the server's end (sniffed) and the client's. */
async function pair(t: TestContext): Promise<{ server: Socket; client: Socket }> {
  const accepted = Promise.withResolvers<Socket>();
  const listener = createServer((socket) => accepted.resolve(socket));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const client = connect((listener.address() as { port: number }).port, '127.0.0.1');
  const server = await accepted.promise;
  t.after(() => {
    client.destroy();
    server.destroy();
    listener.close();
  });
  return { server, client };
}

test('sniffPreface: a preface sent in pieces is h2, with every byte read handed over', async (t: TestContext) => {
  const { server, client } = await pair(t);
  const decided = new Promise<[string, Buffer]>((resolve) => sniffPreface(server, undefined, 5_000, (p, read) => resolve([p, read])));
  client.write(H2_PREFACE.subarray(0, 5));
  await new Promise((r) => setImmediate(r));
  client.write(Buffer.concat([H2_PREFACE.subarray(5), Buffer.from('rest')]));
  const [protocol, read] = await decided;
  assert.equal(protocol, 'h2');
  assert.deepEqual(read, Buffer.concat([H2_PREFACE, Buffer.from('rest')]));
});

test('sniffPreface: an HTTP/1.1 request is h1 at its first byte; bytes read before (a hand-off) count first', async (t: TestContext) => {
  const { server, client } = await pair(t);
  const decided = new Promise<[string, Buffer]>((resolve) => sniffPreface(server, undefined, 5_000, (p, read) => resolve([p, read])));
  client.write('GET / HTTP/1.1\r\n');
  assert.deepEqual(await decided, ['h1', Buffer.from('GET / HTTP/1.1\r\n')]);

  const handed = await pair(t);
  let decision: [string, Buffer] | undefined;
  sniffPreface(handed.server, H2_PREFACE, 5_000, (p, read) => {
    decision = [p, read];
  });
  assert.deepEqual(decision, ['h2', H2_PREFACE], 'decided at once from the head');
});

test('sniffPreface: a client that sends too little to tell is dropped after the timeout', async (t: TestContext) => {
  const { server, client } = await pair(t);
  let decided = false;
  sniffPreface(server, undefined, 50, () => {
    decided = true;
  });
  client.write('PRI');
  await new Promise((resolve) => client.once('close', resolve));
  assert.equal(decided, false);
  assert.equal(server.destroyed, true);
});
