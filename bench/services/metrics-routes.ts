/**
 * The scrape benchmark's service: 50 routes (`/m0` … `/m49`), each answering
 * the status its `?status=` asks for, so that a few requests fill
 * `http_requests_total` / `http_request_duration_seconds` with 50 routes ×
 * several statuses of label values. The default export is the cluster's
 * service module; `metrics-standalone.ts` runs the same routes in one process.
 */
import { type App, type Ctx, defineService, KError, type Route } from 'flotilla';
import { METRIC_ROUTES } from './data.ts';
import { announceWorker } from './items.ts';

export function registerMetricRoutes(app: App): void {
  const routes = Array.from(
    { length: METRIC_ROUTES },
    (_, i): Route => ({
      method: 'GET',
      path: `/m${i}`,
      handler: (ctx: Ctx) => respond(i, Number(ctx.query['status'] ?? 200)),
    }),
  );
  app.registerController({ routes: () => routes });
}

function respond(route: number, status: number): unknown {
  if (status === 400) throw KError.badRequest(`route ${route}: bad request on purpose`);
  if (status === 404) throw KError.notFound(`route ${route}: nothing here on purpose`);
  if (status === 500) throw new Error(`route ${route}: failure on purpose`);
  return { route, status };
}

export default defineService((app) => {
  registerMetricRoutes(app);
  announceWorker(app);
});
