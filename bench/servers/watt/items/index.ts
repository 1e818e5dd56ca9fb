/**
 * The `watt` contender's application (a `@platformatic/node` application, `watt.json` beside this file):
 * the same Fastify app as `servers/fastify.ts` (`services/fastify-items.ts`), request log line off. Watt
 * calls `create()` in each of its worker threads and makes the app listen with the runtime's `server`
 * settings (`reuseTcpPorts`, Watt's default: a SO_REUSEPORT socket per worker). Once listening, each
 * worker writes `ready <port>` straight to fd 2: Watt routes its workers' `process.stderr` through its
 * logger, which the runtime's `logger.level: silent` mutes.
 */
import { writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { buildFastify, type ItemsFastify } from '../../../services/fastify-items.ts';

/** The app Watt makes listen (its factory: `create`). */
export async function create(): Promise<ItemsFastify> {
  const app = await buildFastify(false, false);
  app.addHook('onListen', (done) => {
    writeSync(2, `ready ${(app.server.address() as AddressInfo).port}\n`);
    done();
  });
  return app;
}
