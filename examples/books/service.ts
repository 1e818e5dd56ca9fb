import { defineService } from 'flotilla';
import type { Book } from './book.ts';
import { InMemoryBookRepository, sampleBooks } from './book-repository.ts';
import { BooksController } from './books-controller.ts';
import { catalogueModule } from './catalogue-module.ts';
import { LiveFeedController, NEW_BOOKS } from './live-feed-controller.ts';
import { requireApiKey, serverTiming } from './middlewares.ts';

/**
 * The book catalogue: flotilla's example service. `flotilla start` runs this
 * setup in every worker and once in the primary (where only the cron job and
 * shutdown hooks take effect).
 */
export default defineService((app) => {
  const repo = new InMemoryBookRepository(sampleBooks(5_000));
  const api = app.group('/api', serverTiming);
  // each created book goes to the sockets of GET /api/books/live, on every worker
  const created = (book: Book) => app.publish(NEW_BOOKS, book);
  api.registerController(new BooksController(repo, requireApiKey(process.env['BOOKS_API_KEY'] ?? 'dev-key'), created));
  api.registerController(new LiveFeedController());
  api.use(catalogueModule(repo));
});
