/**
 * `bench/schema-cost.ts`: Fastify 5, no logger, serving `POST /books` with the same Zod schemas as
 * flotilla's zod case (services/book-schemas.ts) through fastify-type-provider-zod's validator and
 * serializer compilers; with `BENCH_SCHEMA=none`, with no schema (the handler leaves the undeclared
 * key out itself, Fastify's default serializer): the reference for what the schemas add.
 */
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { bookReply, SCHEMAS } from '../services/book-schemas.ts';
import { announce, portArg } from '../services/data.ts';

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
if (process.env['BENCH_SCHEMA'] === 'none') {
  app.post('/books', (request, reply) => {
    reply.code(201);
    const { internal: _, ...book } = bookReply(request.body as object);
    return book;
  });
} else {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app
    .withTypeProvider<ZodTypeProvider>()
    .post('/books', { schema: { body: SCHEMAS.zod.body, response: { 201: SCHEMAS.zod.response } } }, (request, reply) => {
      reply.code(201);
      return bookReply(request.body);
    });
}
const port = portArg();
await app.listen({ port, host: '127.0.0.1' });
announce(port);
process.on('SIGTERM', () => void app.close());
