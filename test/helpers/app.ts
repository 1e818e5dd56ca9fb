import type { TestContext } from 'node:test';
import { App } from '../../src/app/app.ts';
import type { AppOptions } from '../../src/app/app-options.ts';
import type { Controller } from '../../src/app/core/registrar.ts';
import type { Route } from '../../src/app/core/route.ts';
import type { KConfig } from '../../src/config/types.ts';
import { type LogSink, sink } from './sink.ts';

/**
 * An App bound to 127.0.0.1 on a free port, logging into a sink, with no
 * signal handlers installed in the test process.
 */
export function testApp(config: KConfig = {}, options: AppOptions = {}): { app: App; logs: LogSink } {
  const logs = sink();
  const app = new App({ port: 0, host: '127.0.0.1', ...config }, { logStream: logs, handleSignals: false, ...options });
  return { app, logs };
}

/**
 * Starts `app` listening for the length of the test `t`, closed after it
 * (awaiting `listen()` too, which settles once the close is done). Resolves
 * with the port.
 */
export async function serve(t: TestContext, app: App): Promise<number> {
  const listening = app.listen();
  t.after(async () => {
    await app.close();
    await listening;
  });
  return (await app.ready()).port;
}

/** A controller serving the given routes. */
export function controller(...routes: Route[]): Controller {
  return { routes: () => routes };
}

/** A promise with its resolvers, for handlers and hooks the test releases itself. */
export function gate<T = void>(): PromiseWithResolvers<T> {
  return Promise.withResolvers<T>();
}
