/**
 * The Fastify side of `bench/static-files.ts`: Fastify 5 with `@fastify/static` serving `STATIC_ROOT`
 * under `/static/` with its defaults (ETag, Last-Modified, ranges, `max-age=0`; `preCompressed` off,
 * its default), logger off. Nothing else: no hooks, no metrics, no security headers.
 */
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import { announce, portArg } from '../services/data.ts';

const root = process.env['STATIC_ROOT'];
if (root === undefined) throw new Error('STATIC_ROOT is not set');
const app = Fastify({ logger: false });
await app.register(fastifyStatic, { root, prefix: '/static/' });
const port = portArg();
await app.listen({ port, host: '127.0.0.1' });
announce(port);
process.on('SIGTERM', () => void app.close());
