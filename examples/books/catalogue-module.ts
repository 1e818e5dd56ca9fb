import { type App, CronScheduler, defineRoute, type Module } from 'flotilla';
import { Counter } from 'prom-client';
import type { InMemoryBookRepository } from './book-repository.ts';

/**
 * Everything about the catalogue that is not a books route: its statistics
 * route, its health checker, its nightly-style report (a cron job that runs
 * once per cluster, in the primary) and its shutdown hook.
 */
export function catalogueModule(repo: InMemoryBookRepository): Module {
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
            handler: () => ({ books: repo.size }), // checked against the 200 schema
          }),
        ],
      });

      app.registerHealthChecker({
        name: 'catalogue',
        check: async () => {
          if (repo.size === 0) throw new Error('the catalogue is empty');
        },
      });

      const reports = new Counter({ name: 'books_reports_total', help: 'Catalogue reports written.', registers: [app.registry] });
      app.registerScheduler(
        new CronScheduler([
          {
            name: 'catalogue-report',
            cron: '*/30 * * * * *',
            run: () => {
              reports.inc();
              app.logger.info({ books: repo.size }, 'catalogue report');
            },
          },
        ]),
      );

      app.onShutdown(async () => {
        // A real service closes its database pool here; the in-memory catalogue only says goodbye.
        app.logger.info({ books: repo.size }, 'catalogue closed');
      });
    },
  };
}
