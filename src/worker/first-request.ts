import { subscribe, unsubscribe } from 'node:diagnostics_channel';

import { UPGRADE_START } from '../utils/upgrade-channel.ts';

/** Node's own channel (published for every request a node:http server receives, before its handler runs) and flotilla's for upgrades. */
const CHANNELS = ['http.server.request.start', UPGRADE_START];

/**
 * Calls `then` once, as the process's first HTTP request arrives, before the
 * App's handler runs: a worker tells the primary it served requests even when
 * the very first one kills it. Nothing is left on the request path afterwards.
 *
 * @example
 * onFirstRequest(() => process.send?.(msg.firstRequest(process.pid)));
 */
export function onFirstRequest(then: () => void): void {
  let seen = false;
  const first = () => {
    if (seen) return;
    seen = true;
    // not while the channel is publishing: the other subscribers of this request still get it
    queueMicrotask(() => {
      for (const name of CHANNELS) unsubscribe(name, first);
    });
    then();
  };
  for (const name of CHANNELS) subscribe(name, first);
}
