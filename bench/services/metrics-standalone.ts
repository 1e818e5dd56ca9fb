/** The scrape benchmark in one process: a standalone App serving its own registry on METRICS_PORT. */
import { App } from 'flotilla';
import { announce, portArg } from './data.ts';
import { registerMetricRoutes } from './metrics-routes.ts';

const app = new App({
  serviceName: 'metrics',
  host: '127.0.0.1',
  port: portArg(),
  metrics: { host: '127.0.0.1', port: Number(process.env['METRICS_PORT']) },
});
registerMetricRoutes(app);
const listening = app.listen();
announce((await app.ready()).port);
await listening;
