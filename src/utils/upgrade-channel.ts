/**
 * Published (`{ request, socket }`) for every upgrade request, before the pipeline runs: node:http
 * publishes `http.server.request.start` for the other requests only. The worker counts both (its
 * first request, its request total).
 */
export const UPGRADE_START = 'flotilla.http.server.upgrade.start';
