/**
 * The example book catalogue, standalone, for `bench/database.ts`: its list
 * route over the in-memory array (`BENCH_BOOKS=memory`), the embedded SQLite
 * file (`sqlite`, `BENCH_BOOKS_FILE`) or PostgreSQL (`postgres`,
 * `BENCH_BOOKS_URL`), with the App's defaults otherwise (request log lines,
 * CORS, metrics). Prints `READY <port>` on stderr once it listens.
 */
import { InMemoryBookRepository, sampleBooks } from '../../examples/books/book-repository.ts';
import { BooksController } from '../../examples/books/books-controller.ts';
import { requireApiKey, serverTiming } from '../../examples/books/middlewares.ts';
import setup from '../../examples/books/service.ts';
import { App } from '../../src/index.ts';

const backend = process.env['BENCH_BOOKS'] ?? 'memory';
const settings =
  backend === 'postgres'
    ? { databaseUrl: process.env['BENCH_BOOKS_URL'], poolSize: 10 }
    : backend === 'sqlite'
      ? { databaseFile: process.env['BENCH_BOOKS_FILE'] }
      : undefined;
const app = new App({
  serviceName: 'books',
  host: '127.0.0.1',
  port: 0,
  cors: { origins: ['http://localhost:8080'] },
  ...(settings === undefined ? {} : { settings }),
});
if (backend === 'memory') {
  const api = app.group('/api', serverTiming);
  api.registerController(new BooksController(new InMemoryBookRepository(sampleBooks(5_000)), requireApiKey('dev-key')));
} else {
  await setup(app);
}
const closed = app.listen();
const { port } = await app.ready();
process.stderr.write(`READY ${port}\n`);
await closed;
