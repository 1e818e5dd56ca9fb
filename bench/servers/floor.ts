/**
 * Contender 1, the floor: node:http + find-my-way + JSON.stringify. No
 * logging, no CORS, no metrics, no request id: what any framework adds costs
 * something on top of this.
 */
import { createServer, type ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import { announce, HttpProblem, itemById, pageOf, parsePage, pathOf, portArg, problemBody, problemOf } from '../services/data.ts';

type Handler = (params: Record<string, string | undefined>, query: Record<string, unknown>) => unknown;

const router = FindMyWay();
const routes: Record<string, Handler> = {
  '/items': (_params, query) => {
    const q = parsePage(query);
    return pageOf(q.page, q.limit);
  },
  '/items/:id': (params) => {
    const item = /^[0-9]+$/.test(params['id'] ?? '') ? itemById(Number(params['id'])) : undefined;
    if (item === undefined) throw new HttpProblem(404, 'NOT_FOUND', `item ${params['id']} does not exist`);
    return item;
  },
};
for (const [path, handler] of Object.entries(routes)) router.on('GET', path, () => {}, handler);

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) }).end(body);
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const found = router.find('GET', url);
  try {
    if (req.method !== 'GET' || found === null) throw new HttpProblem(404, 'ROUTE_NOT_FOUND', `no route for ${req.method} ${pathOf(url)}`);
    const value = (found.store as Handler)(found.params, found.searchParams);
    send(res, 200, 'application/json; charset=utf-8', JSON.stringify(value));
  } catch (error) {
    const p = problemOf(error);
    send(res, p.status, 'application/problem+json', problemBody(p.status, p.code, p.detail, pathOf(url), ''));
  }
});
server.keepAliveTimeout = 72_000;
const port = portArg();
server.listen(port, '127.0.0.1', () => announce(port));
process.on('SIGTERM', () => {
  server.close();
  server.closeIdleConnections();
});
