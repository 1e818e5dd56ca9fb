import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse as Response } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createError, describeValue } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { ServerResponse } from '../../utils/node-http.ts';
import { UPGRADE_START } from '../../utils/upgrade-channel.ts';
import type { Ctx, SocketTopics } from '../core/ctx.ts';
import type { Handler, Route } from '../core/route.ts';
import { chooseProtocol, type WebSocketHub } from './websocket-hub.ts';

/** An upgrade request's socket and the bytes read past its head, until the route upgrades it. */
interface Upgrade {
  readonly socket: Duplex;
  readonly head: Buffer;
  upgraded: boolean;
}

const upgrades = new WeakMap<IncomingMessage, Upgrade>();

const upgradeStart = channel(UPGRADE_START);

/**
 * The server's `upgrade` listener: an upgrade request goes through the whole pipeline, like any
 * other (request id, logs, CORS, route lookup, admission, `onRequest` hooks, params and query
 * validation, middlewares), with a response written on its socket. A websocket route's handler
 * completes the handshake there; any other answer (a hook's 401, a plain route's reply, a 404) is
 * written as usual and the connection closed after it.
 *
 * @example
 * server.on('upgrade', upgradeListener(handler));
 */
export function upgradeListener(
  handler: (req: IncomingMessage, res: Response) => void,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    if (upgradeStart.hasSubscribers) upgradeStart.publish({ request: req, socket });
    // node:http removed its own error listener at the upgrade: a reset must not become an uncaught error
    socket.on('error', () => socket.destroy());
    const upgrade: Upgrade = { socket, head, upgraded: false };
    upgrades.set(req, upgrade);
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    // no parser reads a next request on this connection: it closes after an answer that is not the upgrade
    res.shouldKeepAlive = false;
    res.once('finish', () => {
      if (!upgrade.upgraded) socket.end(() => socket.destroy());
    });
    handler(req, res);
  };
}

/** Whether a request asks for a WebSocket (an upgrade request that reached the pipeline through {@link upgradeListener}). */
export function isUpgrade(req: IncomingMessage): boolean {
  return upgrades.has(req);
}

/**
 * Checks a route's `websocket` option and returns the handler the router runs for it: an upgrade
 * request completes the handshake (after the hooks, validation and middlewares), then the route's
 * `websocket(socket, ctx)` runs; a plain request runs the route's `handler`, or is answered 426
 * (`UPGRADE_REQUIRED`) when the route has none. `attach` gives the route's `ctx` its socket's topics
 * (the App passes core's `attachSocket`: this folder reads the core's types only).
 *
 * @example
 * const handler = webSocketHandler(route, () => hub, attachSocket);
 */
export function webSocketHandler(route: Route, hub: () => WebSocketHub, attach: (ctx: Ctx, topics: SocketTopics) => void): Handler {
  const where = `${String(route.method)} ${String(route.path)}`;
  const open = route.websocket;
  if (typeof open !== 'function') throw createError('FLO_ERR_BAD_ROUTE_OPTION', { route: where, reason: 'websocket must be a function' });
  if (route.method !== 'GET')
    throw createError('FLO_ERR_BAD_ROUTE_OPTION', { route: where, reason: 'websocket is for GET routes (a WebSocket opens with a GET)' });
  const protocols = route.protocols ?? [];
  if (!Array.isArray(protocols) || protocols.some((p) => typeof p !== 'string' || !TOKEN.test(p)))
    throw createError('FLO_ERR_BAD_ROUTE_OPTION', {
      route: where,
      reason: `protocols must be tokens (RFC 7230), got ${describeValue(protocols)}`,
    });
  const plain = route.handler;
  const handler: Handler = (ctx) => {
    const upgrade = upgrades.get(ctx.req);
    if (upgrade === undefined) {
      if (plain !== undefined) return plain(ctx);
      throw upgradeRequired(ctx, `${ctx.path} is a WebSocket endpoint: open it with Upgrade: websocket`);
    }
    const sockets = hub();
    checkHandshake(ctx);
    const protocol = selectProtocol(ctx.req, protocols);
    if (sockets.draining) throw KError.unavailable('the server is shutting down: connect again', { headers: { 'Retry-After': '1' } });
    if (sockets.full)
      throw KError.of('TOO_MANY_WEBSOCKETS', 'this server holds as many WebSockets as it may (websockets.maxConnections): connect again', {
        headers: { 'Retry-After': '1' },
      });
    if (protocol !== undefined) chooseProtocol(ctx.req, protocol);
    upgrade.upgraded = true;
    const who = { route: ctx.route, requestId: ctx.requestId, logger: ctx.logger };
    const accepted = sockets.open(ctx.req, upgrade.socket, upgrade.head, who, (socket, topics) => {
      attach(ctx, topics);
      run(ctx, socket, open);
    });
    ctx.statusCode = 101;
    ctx.reply = { kind: 'upgraded' };
    // the request is over (its log line, metrics and span say 101): the socket lives on in the hub
    ctx.res.emit('finish');
    if (!accepted) upgrade.socket.destroy();
  };
  if (plain === undefined) upgradeOnly.add(handler);
  return handler;
}

/** The handlers of websocket routes without a `handler` of their own: a plain request gets 426. */
const upgradeOnly = new WeakSet<Handler>();

/**
 * Whether a route answers only upgrade requests (a plain GET gets 426), for its documentation.
 *
 * @example
 * if (upgradesOnly(route)) responses['426'] = …;
 */
export function upgradesOnly(route: Route): boolean {
  return route.websocket !== undefined && (route.handler === undefined || upgradeOnly.has(route.handler));
}

/** The route's `websocket(socket, ctx)`; a throw or a rejection closes the socket with 1011 and is logged. */
function run(ctx: Ctx, socket: import('ws').WebSocket, open: NonNullable<Route['websocket']>): void {
  const failed = (error: unknown) => {
    ctx.logger.error({ err: error, route: ctx.route }, 'websocket handler failed');
    if (socket.readyState <= 1) socket.close(1011, 'internal error');
  };
  try {
    const result = open(socket, ctx);
    if (typeof (result as PromiseLike<void> | undefined)?.then === 'function') Promise.resolve(result).catch(failed);
  } catch (error) {
    failed(error);
  }
}

/** RFC 7230's token: what a subprotocol name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * A 426 `UPGRADE_REQUIRED`: it names the protocol to upgrade to (`Upgrade: websocket`, RFC 9110
 * §15.5.22), and `Connection` names the upgrade (RFC 9110 §7.8) and keeps a close the client asked
 * for (node:http keeps a connection open when a reply's Connection says nothing of closing, and its
 * parser refuses what comes next; an upgrade request's connection always closes after the answer).
 */
function upgradeRequired(ctx: Ctx, detail: string, headers: Record<string, string> = {}): KError {
  const connection = ctx.res.shouldKeepAlive ? 'Upgrade' : 'Upgrade, close';
  return KError.of('UPGRADE_REQUIRED', detail, { headers: { Upgrade: 'websocket', Connection: connection, ...headers } });
}

/** The handshake headers `ws` would refuse with a bare status line: refused here with a problem instead. */
function checkHandshake(ctx: Ctx): void {
  const req = ctx.req;
  if (req.headers.upgrade?.toLowerCase() !== 'websocket')
    throw KError.of('BAD_UPGRADE', `Upgrade must be websocket, got ${JSON.stringify(req.headers.upgrade?.slice(0, 40) ?? '')}`);
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !KEY.test(key)) throw KError.of('BAD_UPGRADE', 'Sec-WebSocket-Key is missing or not 16 bytes in base64');
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8')
    throw upgradeRequired(ctx, 'Sec-WebSocket-Version must be 13', { 'Sec-WebSocket-Version': '13' });
}

/**
 * The subprotocol the upgrade selects: the first the client offers (`Sec-WebSocket-Protocol`) among
 * the route's `protocols`; none when it offers none. An offer the route cannot take is refused
 * (400 `UNSUPPORTED_SUBPROTOCOL`): a client that needs a subprotocol would fail the connection anyway.
 */
function selectProtocol(req: IncomingMessage, protocols: readonly string[]): string | undefined {
  const header = req.headers['sec-websocket-protocol'];
  if (header === undefined) return undefined;
  const offered = header.split(',').map((p) => p.trim());
  if (offered.some((p) => !TOKEN.test(p))) throw KError.of('BAD_UPGRADE', 'Sec-WebSocket-Protocol must be a list of tokens');
  const chosen = offered.find((p) => protocols.includes(p));
  if (chosen !== undefined) return chosen;
  const supported = protocols.length === 0 ? 'none' : protocols.join(', ');
  throw KError.of(
    'UNSUPPORTED_SUBPROTOCOL',
    `none of the subprotocols offered (${offered.join(', ').slice(0, 200)}) is supported: ${supported}`,
  );
}
