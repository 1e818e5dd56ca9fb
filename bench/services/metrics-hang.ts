/**
 * The scrape benchmark's 50 routes (`metrics-routes.ts`) plus `GET /hang`, which never answers (the
 * event loop spins forever): the cluster of `metrics-cluster-stuck.yaml` (watchdog off) keeps such a
 * worker stuck while the primary's `/metrics` is timed.
 */
import { defineService } from 'flotilla';
import { announceWorker } from './items.ts';
import { registerMetricRoutes } from './metrics-routes.ts';

export default defineService((app) => {
  registerMetricRoutes(app);
  app.registerController({
    routes: () => [
      {
        method: 'GET',
        path: '/hang',
        handler: () => {
          for (;;) {
            // stuck on purpose, forever: `while (true) {}`
          }
        },
      },
    ],
  });
  announceWorker(app);
});
