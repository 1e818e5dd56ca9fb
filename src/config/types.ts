import type { FromSchema } from 'json-schema-to-ts';
import type { CONFIG_SCHEMA } from './schema.ts';

// The config types are derived from CONFIG_SCHEMA (schema.ts), where every key is declared once with
// its description and default; the configuration reference (docs/reference/config.md) has them too. `FromSchema` keeps
// no descriptions for an editor's hover, hence the short comments here pointing at the schema.

type Schema = typeof CONFIG_SCHEMA;

/** What users may write: every key optional, defaulted or not. */
type Input = FromSchema<Schema, { keepDefaultedPropertiesOptional: true }>;

/** A key of an object type, its `undefined` removed (as `exactOptionalPropertyTypes` reads an optional key). */
type Inner<T, K extends keyof T> = Exclude<T[K], undefined>;

/**
 * Configuration of an App, and the top level of the YAML file: every key optional. Each key's
 * meaning and default are in `CONFIG_SCHEMA` (src/config/schema.ts) and docs/reference/config.md.
 *
 * @example
 * const app = new App({ serviceName: 'books', port: 0, env: 'production' });
 */
export interface KConfig extends Input {}

/** Documentation settings (`docs`); see `CONFIG_SCHEMA.properties.docs`. */
export interface DocsConfig extends Inner<KConfig, 'docs'> {}
/** Contact information of the documented API (`docs.contact`, OpenAPI `info.contact`). */
export interface DocsContact extends Inner<DocsConfig, 'contact'> {}
/** License of the documented API (`docs.license`, OpenAPI `info.license`). */
export interface DocsLicense extends Inner<DocsConfig, 'license'> {}
/** A security scheme of the API (a value of `docs.securitySchemes`, OpenAPI `components.securitySchemes`), by its `type`. */
export type DocsSecurityScheme = Inner<DocsConfig, 'securitySchemes'>[string];
/** A tag grouping operations in the documentation (an entry of `docs.tags`). */
export type DocsTag = Inner<DocsConfig, 'tags'>[number];
/** CORS settings (`cors`); see `CONFIG_SCHEMA.properties.cors`. */
export interface CorsConfig extends Inner<KConfig, 'cors'> {}
/** Cookie secrets (`cookies`); see `CONFIG_SCHEMA.properties.cookies`. */
export interface CookiesConfig extends Inner<KConfig, 'cookies'> {}
/** Response compression (`compression`); see `CONFIG_SCHEMA.properties.compression`. */
export interface CompressionConfig extends Inner<KConfig, 'compression'> {}
/** Security headers on every reply (`securityHeaders`); see `CONFIG_SCHEMA.properties.securityHeaders`. */
export interface SecurityHeadersConfig extends Inner<KConfig, 'securityHeaders'> {}
/** Request size limits (`limits`); see `CONFIG_SCHEMA.properties.limits`. */
export interface LimitsConfig extends Inner<KConfig, 'limits'> {}
/** Request and connection timeouts in ms (`timeouts`); see `CONFIG_SCHEMA.properties.timeouts`. */
export interface TimeoutsConfig extends Inner<KConfig, 'timeouts'> {}
/** Logging settings (`logging`); see `CONFIG_SCHEMA.properties.logging`. */
export interface LoggingConfig extends Inner<KConfig, 'logging'> {}
/** Health route settings (`health`); see `CONFIG_SCHEMA.properties.health`. */
export interface HealthConfig extends Inner<KConfig, 'health'> {}
/** Graceful shutdown settings (`shutdown`); see `CONFIG_SCHEMA.properties.shutdown`. */
export interface ShutdownConfig extends Inner<KConfig, 'shutdown'> {}
/** Prometheus endpoint settings (`metrics`); see `CONFIG_SCHEMA.properties.metrics`. */
export interface MetricsConfig extends Inner<KConfig, 'metrics'> {}
/** Message catalogs (`i18n`); see `CONFIG_SCHEMA.properties.i18n`. */
export interface I18nConfig extends Inner<KConfig, 'i18n'> {}
/** Worker supervision in cluster mode (`cluster`); see `CONFIG_SCHEMA.properties.cluster`. */
export interface ClusterConfig extends Inner<KConfig, 'cluster'> {}
/** Schedulers across replicas (`coordination`); see `CONFIG_SCHEMA.properties.coordination`. */
export interface CoordinationConfig extends Inner<KConfig, 'coordination'> {}
/** WebSocket limits (`websockets`); see `CONFIG_SCHEMA.properties.websockets`. */
export interface WebSocketsConfig extends Inner<KConfig, 'websockets'> {}

/** Readonly, and the objects one level down too (a resolved config is deeply frozen at run time). */
type ReadonlyTwoLevels<T> = { readonly [K in keyof T]: ReadonlyValue<T[K]> };
// distributive: a key that is a number or a list (`trustProxy`) keeps its list mutable, as the other lists
type ReadonlyValue<V> = V extends readonly unknown[] ? V : Readonly<V>;

/**
 * A validated config with every default applied, deeply frozen: every key with a default in
 * `CONFIG_SCHEMA` is present; `docs.description`/`contact`/`license`, `i18n`, `service` and
 * `coordination.url`, which have none, stay optional.
 */
export interface ResolvedConfig extends ReadonlyTwoLevels<FromSchema<Schema>> {}
