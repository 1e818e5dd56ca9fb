/** Fastify 5, full (services/fastify-items.ts), with the same response schemas as flotilla's: replies serialized by fast-json-stringify. */
import { runFastify } from '../services/fastify-items.ts';

await runFastify(true);
