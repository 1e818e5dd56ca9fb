/**
 * The flotilla side of `bench/static-files.ts`: a standalone App with its defaults (metrics, security
 * headers, CORS, request ids, compression on) but the request log line, serving `STATIC_ROOT` under
 * `/static` with `app.serveStatic` and its defaults (precompressed siblings looked for when the request
 * takes an encoding: wrk asks for none).
 */
import { App } from '../../src/index.ts';
import { announce, portArg } from '../services/data.ts';

const root = process.env['STATIC_ROOT'];
if (root === undefined) throw new Error('STATIC_ROOT is not set');
const app = new App({ serviceName: 'static', host: '127.0.0.1', port: portArg(), env: 'production', logging: { requests: false } });
app.serveStatic('/static', root);
const listening = app.listen();
announce((await app.ready()).port);
await listening;
