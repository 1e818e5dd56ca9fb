import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { get, sample, scrapeUntil, startCluster, tempFiles, untilEachAnswered } from '../helpers/cluster.ts';

/**
 * A service's own metric made with the classes `flotilla` re-exports (no `prom-client` import: the
 * project need not install it) and registered in `app.registry`: one scrape of the primary sums it
 * over the workers, like the request metrics.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

const SERVICE = `import { Counter, Gauge, Histogram, Summary, defineService } from '${INDEX}';

export default defineService((app) => {
  const orders = new Counter({ name: 'shop_orders_total', help: 'Orders placed.', labelNames: ['kind'], registers: [app.registry] });
  const sizes = new Histogram({ name: 'shop_order_items', help: 'Items per order.', buckets: [1, 5], registers: [app.registry] });
  new Summary({ name: 'shop_order_seconds', help: 'Time to place an order.', registers: [app.registry] });
  new Gauge({ name: 'shop_open_carts', help: 'Carts open.', registers: [app.registry] });
  app.registerController({
    routes: () => [
      {
        method: 'GET',
        path: '/order',
        handler: () => {
          orders.inc({ kind: 'web' });
          sizes.observe(2);
          return { pid: process.pid };
        },
      },
    ],
  });
});
`;

test('a Counter made with flotilla’s re-export lands in the cluster’s sum over 2 workers', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': SERVICE });
  const cluster = startCluster(t, { config: { service: join(dir, 'service.ts') } });
  const { appPort, metricsPort, workers } = await cluster.ready();

  const order = async () => {
    const reply = await get(appPort, '/order');
    t.assert.strictEqual(reply.status, 200, reply.body);
    return (JSON.parse(reply.body) as { pid: number }).pid;
  };
  const pids = await untilEachAnswered(workers.values(), order, (pid) => pid, 30);
  t.assert.strictEqual(new Set(pids).size, 2, 'the orders were spread over both workers, so the total is a sum');
  const orders = pids.length;

  const text = await scrapeUntil(metricsPort, (body) => sample(body, 'shop_orders_total{kind="web"}') === orders);
  t.assert.strictEqual(sample(text, 'shop_orders_total{kind="web"}'), orders);
  t.assert.strictEqual(sample(text, 'shop_order_items_count'), orders, 'a Histogram is summed too');
  t.assert.strictEqual(sample(text, 'shop_order_items_bucket{le="1"}'), 0);
  t.assert.strictEqual(sample(text, 'shop_order_items_bucket{le="5"}'), orders);
  t.assert.match(text, /^# TYPE shop_order_seconds summary$/m, 'a Summary is there');
  t.assert.match(text, /^# TYPE shop_open_carts gauge$/m, 'a Gauge is there');
});
