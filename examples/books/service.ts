import { defineService } from 'flotilla';
import { InMemoryBookRepository, sampleBooks } from './book-repository.ts';
import { BooksController } from './books-controller.ts';
import { catalogueModule } from './catalogue-module.ts';
import { requireApiKey, serverTiming } from './middlewares.ts';

/**
 * The book catalogue: flotilla's example service. `flotilla start` runs this
 * setup in every worker and once in the primary (where only the cron job and
 * shutdown hooks take effect).
 */
export default defineService((app) => {
  const repo = new InMemoryBookRepository(sampleBooks(5_000));
  const api = app.group('/api', serverTiming);
  api.registerController(new BooksController(repo, requireApiKey(process.env['BOOKS_API_KEY'] ?? 'dev-key')));
  api.use(catalogueModule(repo));
});
