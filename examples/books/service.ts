import { fileURLToPath } from 'node:url';
import { defineService } from 'flotilla';
import { AccountController } from './account-controller.ts';
import type { Book } from './book.ts';
import { sampleBooks } from './book-repository.ts';
import { BooksController } from './books-controller.ts';
import { catalogueModule } from './catalogue-module.ts';
import { databaseModule } from './database/database-module.ts';
import { migrateBooks } from './database/migrate-books.ts';
import { openDatabase } from './database/open-database.ts';
import { SqlBookRepository } from './database/sql-book-repository.ts';
import { LiveFeedController, NEW_BOOKS } from './live-feed-controller.ts';
import { requireApiKey, serverTiming } from './middlewares.ts';
import { BOOKS_SETTINGS, type BooksSettings, credential } from './settings.ts';

/**
 * The book catalogue: flotilla's example service. `flotilla start` runs this
 * setup in every worker and once in the primary (where only the cron job,
 * the `beforeServe` migrations and the shutdown hooks take effect). The books
 * live in the embedded SQLite file by default, in PostgreSQL when
 * `settings.databaseUrl` is set.
 */
export default defineService({
  settings: BOOKS_SETTINGS,
  async setup(app) {
    const settings = app.settings as BooksSettings;
    // the development key and password are refused in production (settings.ts, config/app.yaml)
    const apiKey = credential(app.config.env, settings, 'apiKey');
    const readerPassword = credential(app.config.env, settings, 'readerPassword');
    const db = await openDatabase(settings, { logger: app.logger, primary: app.role === 'primary' });
    const migrations = (signal?: AbortSignal) =>
      migrateBooks(db, { logger: app.logger, seed: () => sampleBooks(settings.seedBooks), signal });
    if (db.kind === 'sqlite' && settings.databaseFile === ':memory:') {
      // a database per process: each one migrates and seeds its own, now
      await migrations();
    } else {
      // once per deployment, before anything is served: the cluster's primary, or a standalone App's listen()
      app.beforeServe(async (signal) => void (await migrations(signal)));
    }
    const repo = new SqlBookRepository(db);
    const api = app.group('/api', serverTiming);
    // each created book goes to the sockets of GET /api/books/live, on every worker
    const created = (book: Book) => app.publish(NEW_BOOKS, book);
    api.registerController(new BooksController(repo, requireApiKey(apiKey), created));
    api.registerController(new LiveFeedController());
    api.use(catalogueModule(repo));
    // the front page and its login: a session per reader, kept by the primary for every worker
    app.registerController(new AccountController(readerPassword));
    app.serveStatic('/', fileURLToPath(new URL('./public', import.meta.url)));
    // last: its shutdown hook closes the pool after the report job's scheduler has stopped
    app.use(databaseModule(db));
  },
});
