/**
 * The App's face for flotilla's own hosts: all that `src/primary/` and `src/worker/` may import of
 * `src/app/` (with `light-face.ts`, the part of it that loads no App). It holds what the hosts need and
 * a service does not; a service's face is `src/index.ts`. A file of `src/app/` may move or split
 * without a host noticing, as long as this file still exports what it did
 * (`test/architecture/imports.test.ts` enforces the rule: ARCHITECTURE.md, "The App's face").
 *
 * @example
 * import { App, awaitsStartHooks } from '../app/index.ts';
 * const app = new App(config, { role: 'worker', handleSignals: false, runSchedulers: false });
 * await setup(app);
 * if (awaitsStartHooks(app)) await primaryServes();
 */

export { App } from './app.ts';
export { awaitsStartHooks } from './lifecycle/start-hooks.ts';
export { headerLines, securityHeaderList } from './light-face.ts';
export { ServicePart } from './service-part.ts';
export type { ConnectionSource } from './transport/connection-source.ts';
