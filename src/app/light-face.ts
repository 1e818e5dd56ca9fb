/**
 * The part of the App's face for flotilla's hosts (`index.ts`) that loads no App: what the primary's
 * main thread, which never hosts one, takes of it. Importing it loads a leaf, not the router, the
 * pipeline or ajv (ARCHITECTURE.md, "The App's face"); `index.ts` re-exports all of it.
 *
 * @example
 * import { headerLines, securityHeaderList } from '../app/light-face.ts';
 * const overloaded = headerLines(securityHeaderList(config.securityHeaders)); // the 503's security headers
 */

export { headerLines, securityHeaderList } from './headers/security-headers.ts';
