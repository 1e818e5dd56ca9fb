/**
 * Request bodies: `readJsonBody` for the default JSON routes, `readBody` for
 * every kind a route may declare (see `bodies/`).
 */
export * from './bodies/index.ts';
