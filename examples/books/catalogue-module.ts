import { type App, CronScheduler, defineRoute, type Module } from 'flotilla';
import { Counter } from 'prom-client';
import type { BookRepository } from './book-repository.ts';

/**
 * Everything about the catalogue that is not a books route: its statistics
 * route and its nightly-style report (a cron job that runs once per cluster,
 * in the primary). The database's health checker and shutdown hook are the
 * database module's (`database/database-module.ts`).
 */
export function catalogueModule(repo: BookRepository): Module {
  return {
    register(app: App) {
      app.registerController({
        routes: () => [
          defineRoute({
            method: 'GET',
            path: '/stats',
            summary: 'Catalogue statistics',
            description: 'How many books the catalogue holds.',
            tags: ['catalogue'],
            schema: { response: { 200: { type: 'object', required: ['books'], properties: { books: { type: 'integer' } } } } },
            handler: async (ctx) => ({ books: await repo.count(ctx.context().signal) }), // checked against the 200 schema
          }),
        ],
      });

      const reports = new Counter({ name: 'books_reports_total', help: 'Catalogue reports written.', registers: [app.registry] });
      app.registerScheduler(
        new CronScheduler([
          {
            name: 'catalogue-report',
            cron: '*/30 * * * * *',
            run: async (signal) => {
              const books = await repo.count(signal);
              reports.inc();
              app.logger.info({ books }, 'catalogue report');
            },
          },
        ]),
      );
    },
  };
}
