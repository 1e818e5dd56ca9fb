/** Contender 2: Fastify 5, full (services/fastify-items.ts), replies serialized with JSON.stringify (no response schema). */
import { runFastify } from '../services/fastify-items.ts';

await runFastify(false);
