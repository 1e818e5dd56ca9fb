import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import fc from 'fast-check';
import pino, { type DestinationStream } from 'pino';
import { createLogger } from '../../../src/app/observability/logger.ts';
import { directLines, type RequestLine, writeRequestLine } from '../../../src/app/observability/request-line.ts';
import { resolveConfig } from '../../../src/index.ts';

/** A destination that keeps what it is given. */
function capture(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (s: string) => void lines.push(s) };
}

const config = (level = 'info') => resolveConfig({ serviceName: 'items', logging: { level } } as never);
/** The time moves between two writes: compare the lines without it. */
const timeless = (s: string | undefined) => s?.replace(/,"time":"[^"]*"/, '');

/** Header values and URLs reach the line as latin1 strings; routes are the developer's, any UTF-16 text (lone surrogates too). */
const latin1 = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 120 });
const utf16 = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 120 });
const text = fc.oneof(latin1, fc.string({ unit: 'grapheme', maxLength: 40 }), utf16);
const requestLine: fc.Arbitrary<RequestLine> = fc.record({
  requestId: latin1,
  traceId: fc.option(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }), { nil: undefined }),
  method: fc.constantFrom('GET', 'POST', 'DELETE', 'PROPFIND'),
  route: text,
  path: latin1,
  ip: fc.oneof(fc.ipV4(), fc.ipV6(), latin1),
  status: fc.integer({ min: 100, max: 599 }),
  durationMs: fc.oneof(
    fc.constant(0),
    fc.double({ min: 0, max: 1e6, noNaN: true }).map((d) => Math.round(d * 1000) / 1000),
  ),
  bytes: fc.option(fc.nat(), { nil: undefined }),
  protocol: fc.option(fc.constantFrom('h1' as const, 'h2' as const), { nil: undefined }),
  tls: fc.option(fc.boolean(), { nil: undefined }),
});

test('property: the request line is byte for byte what pino writes for logger.info(line, msg)', () => {
  const stream = capture();
  const logger = createLogger(config(), stream, { role: 'worker', worker: 3 });
  fc.assert(
    fc.property(requestLine, (line) => {
      logger.info(line, 'request completed');
      writeRequestLine(logger, line);
      const [viaPino, direct] = stream.lines.splice(0);
      assert.equal(timeless(direct), timeless(viaPino));
      assert.deepEqual(JSON.parse(direct ?? ''), { ...JSON.parse(viaPino ?? ''), time: JSON.parse(direct ?? '').time });
    }),
    { numRuns: 1000 },
  );
});

const LINE: RequestLine = {
  requestId: 'r1',
  traceId: undefined,
  method: 'GET',
  route: '/items',
  path: '/items',
  ip: '127.0.0.1',
  status: 200,
  durationMs: 1.5,
  bytes: undefined,
};

test('above info level nothing is written; bindings changed later are in the line', () => {
  const stream = capture();
  const logger = createLogger(config('warn'), stream);
  writeRequestLine(logger, LINE);
  assert.deepEqual(stream.lines, []);
  logger.level = 'info';
  logger.setBindings({ zone: 'eu-1' });
  writeRequestLine(logger, LINE);
  logger.info(LINE, 'request completed');
  assert.equal(timeless(stream.lines[0]), timeless(stream.lines[1]));
  assert.match(stream.lines[0] ?? '', /"zone":"eu-1"/);
});

test('a logger the App did not make, or a stream that needs pino’s metadata, goes through pino', () => {
  const own = capture();
  const foreign = pino({ base: null, timestamp: false, formatters: { log: (o) => ({ ...o, extra: true }) } }, own);
  writeRequestLine(foreign, LINE);
  const { traceId: _t, bytes: _b, ...defined } = LINE;
  assert.deepEqual(JSON.parse(own.lines[0] ?? ''), { level: 30, ...defined, extra: true, msg: 'request completed' });

  const seen: unknown[] = [];
  const multi = pino.multistream([{ stream: { write: (s: string) => void seen.push(s) } }]);
  const logger = createLogger(config(), multi);
  writeRequestLine(logger, LINE);
  assert.equal(seen.length, 1);
  assert.equal(JSON.parse(String(seen[0])).msg, 'request completed');
});

test('a mixin or hook added to the logger after createLogger (a tracing integration) sends the line through pino', () => {
  const stream = capture();
  const logger = createLogger(config(), stream);
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.mixinSym] = () => ({ trace_id: 'abc' });
  writeRequestLine(logger, LINE);
  assert.equal(JSON.parse(stream.lines[0] ?? '').trace_id, 'abc');
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.mixinSym] = undefined;
  writeRequestLine(logger, LINE);
  assert.equal(JSON.parse(stream.lines[1] ?? '').trace_id, undefined);
});

test('pino is pinned to the minor these tests compare the direct line with, whose internal symbols are all there', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const range = manifest.dependencies['pino'] ?? '';
  assert.match(range, /^~\d+\.\d+\.\d+$/, 'a tilde range: patch releases only');
  const { version } = createRequire(import.meta.url)('pino/package.json') as { version: string };
  const minor = (v: string) => v.split('.').slice(0, 2).join('.');
  assert.equal(minor(version), minor(range.slice(1)), `installed pino ${version} within ${range}`);
  assert.equal(directLines, true);
});
