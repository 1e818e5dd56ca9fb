import type { ResolvedConfig } from '../../config/types.ts';
import type { Route } from '../core/route.ts';
import type { DocumentedRoute } from '../core/route-schemas.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';
import { docsRoutes } from './swagger-ui.ts';

/** What the OpenAPI document is built from: the App's documented routes (its router). */
export interface DocumentedRoutes {
  /** The routes, and a number that moves when documented `onRequest` hooks were added. */
  documentedRoutes(): { routes: DocumentedRoute[]; hooks: number };
  /** Moves with every route added. */
  readonly version: number;
}

/**
 * An App's OpenAPI document: built from its routes when asked, and again only once routes or
 * documented hooks were added since; outside `production`, `GET {docs.path}` (the Swagger UI) and
 * `GET {docs.path}/openapi.json` are routed through `add`.
 *
 * @example
 * const openapi = installOpenApi(config, router, (route) => router.add(route, '', [], []));
 * openapi(); // the OpenAPI 3.1 document
 */
export function installOpenApi(config: ResolvedConfig, routes: DocumentedRoutes, add: (route: Route) => void): () => OpenApiDocument {
  let built: { version: string; document: OpenApiDocument } | undefined;
  const document = (): OpenApiDocument => {
    const { routes: documented, hooks } = routes.documentedRoutes();
    const version = `${routes.version}/${hooks}`;
    if (built?.version !== version) built = { version, document: buildOpenApi(config, documented) };
    return built.document;
  };
  if (config.env !== 'production') for (const route of docsRoutes(config.docs.path, document)) add(route);
  return document;
}
