/**
 * Coded errors for misuse of the framework: a route that cannot be
 * registered, a hook that is not a function, an i18n directory that cannot be
 * read… (as fastify's `lib/errors.js` does). They are thrown at registration
 * or start-up, never sent to a client: HTTP errors are {@link KError}s, config
 * errors are `ConfigError`s.
 *
 * Each code is declared once in {@link FLOTILLA_ERRORS} with its message
 * template and the built-in class it extends: a code whose base is `TypeError`
 * makes errors that are `instanceof TypeError` (as the bare `TypeError`s thrown
 * before codes existed were) and `instanceof FlotillaError`. As with Node's own
 * coded errors (`TypeError [ERR_INVALID_ARG_TYPE]: …`), `name` stays the base
 * class's name and the code shows in the stack and in `String(error)`.
 *
 * The table of misuse codes in docs/reference/errors.md is checked against this registry by a test.
 */

/** The built-in classes a misuse error can extend. */
export type FlotillaErrorBase = ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor;

/**
 * The registry: code → message template (`{name}` placeholders) and base class.
 *
 * @example
 * FLOTILLA_ERRORS.FLO_ERR_ROUTE_CONFLICT.message; // 'cannot register {route}: {reason}'
 */
export const FLOTILLA_ERRORS = {
  // routes and groups
  FLO_ERR_BAD_ROUTE: { base: TypeError, message: 'a route must be an object with a method, a path and a handler, got {got}' },
  FLO_ERR_BAD_METHOD: { base: TypeError, message: 'route {route}: method must be one of {methods}' },
  FLO_ERR_BAD_PATH: { base: TypeError, message: "route {route}: path must start with '/'" },
  FLO_ERR_BAD_HANDLER: { base: TypeError, message: 'route {route}: handler must be a function' },
  FLO_ERR_BAD_MIDDLEWARE: { base: TypeError, message: '{owner}: middlewares must be functions' },
  FLO_ERR_BAD_PATTERN: { base: TypeError, message: 'cannot register {route}: {reason}' },
  FLO_ERR_ROUTE_CONFLICT: { base: Error, message: 'cannot register {route}: {reason}' },
  FLO_ERR_BAD_SCHEMA: { base: Error, message: 'route {route}: the {part} schema is invalid: {reason}' },
  FLO_ERR_BAD_BODY_OPTION: { base: TypeError, message: 'route {route}: {reason}' },
  FLO_ERR_BAD_ROUTE_OPTION: { base: TypeError, message: 'route {route}: {reason}' },
  FLO_ERR_BAD_RATE_LIMIT: { base: TypeError, message: '{owner}: {reason}' },
  FLO_ERR_BAD_PREFIX: { base: TypeError, message: "group prefix must start with '/', got '{prefix}'" },
  FLO_ERR_BAD_GROUP_OPTION: { base: TypeError, message: "group '{prefix}': {reason}" },
  FLO_ERR_BAD_SECURITY: { base: Error, message: '{owner}: {reason}' },
  FLO_ERR_BAD_CONNECT_MIDDLEWARE: { base: TypeError, message: 'fromConnect expects a (req, res, next) function, got {got}' },
  FLO_ERR_BAD_STATIC_OPTION: { base: TypeError, message: "app.serveStatic('{prefix}'): {reason}" },
  FLO_ERR_STATIC_DIRECTORY: { base: Error, message: "app.serveStatic('{prefix}'): cannot serve '{dir}': {reason}" },
  // handlers and middlewares at request time
  FLO_ERR_BAD_STATUS: { base: TypeError, message: '{subject} must be an integer in {range}, got {status}' },
  FLO_ERR_NEXT_TWICE: { base: Error, message: 'next() called more than once' },
  FLO_ERR_NO_COOKIE_SECRETS: {
    base: Error,
    message: "ctx.cookies.{method}('{name}', { signed: true }) needs a secret: set cookies.secrets in the config",
  },
  FLO_ERR_BAD_COOKIE: { base: TypeError, message: "ctx.cookies.set('{name}'): {reason}" },
  FLO_ERR_SESSION_TOO_LARGE: {
    base: RangeError,
    message: 'the session is {bytes} bytes as JSON, more than sessions.maxBytes ({max}): it was not saved',
  },
  FLO_ERR_SESSIONS_NEED_SECRETS: {
    base: Error,
    message: 'ctx.session() signs its cookie with cookies.secrets: set at least one secret in the config',
  },
  FLO_ERR_SESSION_VALUE: { base: TypeError, message: 'the session cannot be saved as JSON: {reason}' },
  FLO_ERR_BAD_SESSION_STORE: {
    base: TypeError,
    message:
      'app.setSessionStore expects an express-session store (get, set, destroy) or a SessionStore (get, set, delete, close), got {got}',
  },
  FLO_ERR_SESSION_STORE_FIXED: { base: Error, message: 'app.setSessionStore: {reason}' },
  FLO_ERR_NOT_A_WEBSOCKET: { base: Error, message: '{method} is for the ctx of a websocket route, once its socket is open' },
  FLO_ERR_BAD_JWT_OPTION: { base: TypeError, message: 'jwtAuth: {reason}' },
  // topics
  FLO_ERR_BAD_TOPIC: { base: TypeError, message: 'a topic must be a string of 1 to {max} characters, got {got}' },
  FLO_ERR_PUBLISH_TOO_LARGE: {
    base: RangeError,
    message: 'publish to {topic}: {bytes} bytes exceed websockets.maxMessageBytes ({max})',
  },
  // the App
  FLO_ERR_BAD_HOOK: { base: TypeError, message: '{owner} expects a function, got {got}' },
  FLO_ERR_BAD_HEALTH_CHECKER: { base: TypeError, message: 'a health checker needs a non-empty name and a check(signal) function' },
  FLO_ERR_DUPLICATE_HEALTH_CHECKER: { base: Error, message: "health checker '{name}' is already registered" },
  FLO_ERR_LISTEN_TWICE: { base: Error, message: 'listen() cannot be called when the App is {state}' },
  // i18n
  FLO_ERR_I18N_DIRECTORY: { base: Error, message: "cannot read the message catalogs at '{path}': {reason}" },
  FLO_ERR_BAD_LOCALE: { base: Error, message: "{file}: '{locale}' is not a locale tag" },
  FLO_ERR_BAD_CATALOG: { base: Error, message: '{catalog}: {reason}' },
  FLO_ERR_NO_FALLBACK_CATALOG: { base: Error, message: "the fallback locale '{fallback}' has no catalog (have: {locales})" },
  // schedulers
  FLO_ERR_BAD_CRON_JOB: { base: TypeError, message: 'CronScheduler: {reason}' },
  FLO_ERR_DUPLICATE_CRON_JOB: { base: TypeError, message: 'CronScheduler: job "{name}" is defined twice; job names must be unique' },
  FLO_ERR_BAD_CRON_EXPRESSION: {
    base: TypeError,
    message: 'CronScheduler: job "{name}" has an invalid cron expression {expression}: {reason}',
  },
  FLO_ERR_BAD_TIME_ZONE: { base: TypeError, message: 'CronScheduler: unknown time zone {timezone}' },
  FLO_ERR_UNKNOWN_JOB: { base: Error, message: 'runScheduled({name}): no registered scheduler has a job of that name; {known}' },
  FLO_ERR_JOB_NOT_RUNNABLE: { base: Error, message: 'runScheduled({name}): {reason}' },
  FLO_ERR_COORDINATION_CLIENT_MISSING: {
    base: Error,
    message: 'coordination.url is a {scheme}:// URL: install {name} (npm install {name}), an optional peer dependency of flotilla',
  },
  // migrations
  FLO_ERR_BAD_MIGRATE_OPTION: { base: TypeError, message: 'migrate(): {reason}' },
  FLO_ERR_MIGRATIONS_DIRECTORY: { base: Error, message: "migrate(): cannot use the migrations at '{dir}': {reason}" },
  // metrics
  FLO_ERR_METRIC_CONFLICT: { base: TypeError, message: 'metric {name} is already registered {conflict}' },
  // services and the cluster
  FLO_ERR_BAD_SERVICE_SETUP: {
    base: TypeError,
    message: 'defineService expects a setup function (app) => void or { settings?: schema, logger?: () => Logger, setup(app) }, got {got}',
  },
  FLO_ERR_BAD_SERVICE_MODULE: {
    base: TypeError,
    message: '{path} must export a setup function as its default export: export default defineService((app) => { ... })',
  },
  FLO_ERR_NOT_STARTED_BY_PRIMARY: { base: Error, message: '{variable} {problem}: this entry point is started by the flotilla primary' },
  FLO_ERR_CLI_USAGE: { base: TypeError, message: '{problem}' },
  FLO_ERR_PRETTY_MISSING: {
    base: Error,
    message: 'logging.pretty needs the pino-pretty package: npm install --save-dev pino-pretty (or turn logging.pretty off)',
  },
  FLO_ERR_BAD_LOGGER: {
    base: TypeError,
    message: 'the logger option expects a pino Logger (defineService: a function returning one), got {got}',
  },
} as const satisfies Record<string, { base: FlotillaErrorBase; message: string }>;

/** Every misuse code, e.g. `'FLO_ERR_ROUTE_CONFLICT'`. */
export type FlotillaErrorCode = keyof typeof FLOTILLA_ERRORS;

/** The `{name}` placeholders of a template (a brace pair with spaces or punctuation in it, `{ ... }`, is text). */
type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? (P extends `${string}${' ' | '.' | ',' | '(' | ')'}${string}` ? never : P) | Placeholders<Rest>
  : never;

/** The values a code's message template needs, e.g. `{ route: string; reason: string }`. */
export type FlotillaErrorParams<C extends FlotillaErrorCode> = Record<Placeholders<(typeof FLOTILLA_ERRORS)[C]['message']>, unknown>;

/** `[params, options?]`, with `params` optional for a template without placeholders. */
export type FlotillaErrorArgs<C extends FlotillaErrorCode> = [Placeholders<(typeof FLOTILLA_ERRORS)[C]['message']>] extends [never]
  ? [params?: FlotillaErrorParams<C>, options?: ErrorOptions]
  : [params: FlotillaErrorParams<C>, options?: ErrorOptions];

const PLACEHOLDER = /\{(\w+)\}/g;
const BRAND = Symbol.for('flotilla.FlotillaError');

/** Fills a template's placeholders; a value that is not a string is shown with `String()`. */
function format(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

interface Coded {
  readonly code: FlotillaErrorCode;
}

/** Sets the code on a freshly built error and marks it as a FlotillaError. */
function stamp(error: Error, code: FlotillaErrorCode): void {
  Object.defineProperty(error, 'code', { value: code, enumerable: true, configurable: true, writable: false });
  Object.defineProperty(error, BRAND, { value: true });
}

/**
 * Captures the stack above `constructorOpt` with `Name [CODE]: message` as its
 * first line, the way Node's own coded errors read; `name` itself stays the
 * base class's name.
 */
function captureStack(error: Error & Coded, constructorOpt: NewableFunction | CallableFunction): void {
  Object.defineProperty(error, 'name', { value: `${error.name} [${error.code}]`, configurable: true, writable: true });
  Error.captureStackTrace(error, constructorOpt);
  void error.stack;
  delete (error as { name?: string }).name;
}

function codedToString(this: Error & Coded): string {
  return `${this.name} [${this.code}]: ${this.message}`;
}

/** One subclass per base other than Error, built once: `FlotillaTypeError extends TypeError`… */
const SUBCLASSES = new Map<FlotillaErrorBase, new (message: string, options?: ErrorOptions) => Error>();
function subclassOf(base: FlotillaErrorBase): new (message: string, options?: ErrorOptions) => Error {
  let subclass = SUBCLASSES.get(base);
  if (subclass === undefined) {
    subclass = class extends (base as ErrorConstructor) {};
    Object.defineProperty(subclass, 'name', { value: `Flotilla${base.name}` });
    Object.defineProperty(subclass.prototype, 'toString', { value: codedToString, writable: true, configurable: true });
    SUBCLASSES.set(base, subclass);
  }
  return subclass;
}

/**
 * A misuse of the framework, with a stable `code`. Constructing one with a
 * code whose base is `TypeError` (or `RangeError`) gives an error that is an
 * instance of that class too.
 *
 * @example
 * try {
 *   app.registerController({ routes: () => [{ method: 'GET', path: '/books', handler }] });
 * } catch (error) {
 *   if (error instanceof FlotillaError && error.code === 'FLO_ERR_ROUTE_CONFLICT') console.error(error.message);
 * }
 *
 * @example
 * throw new FlotillaError('FLO_ERR_DUPLICATE_HEALTH_CHECKER', { name: 'db' });
 * // Error [FLO_ERR_DUPLICATE_HEALTH_CHECKER]: health checker 'db' is already registered
 */
export class FlotillaError extends Error {
  declare readonly code: FlotillaErrorCode;

  constructor(code: FlotillaErrorCode, params?: Record<string, unknown>, options?: ErrorOptions) {
    const entry = FLOTILLA_ERRORS[code] as { base: FlotillaErrorBase; message: string } | undefined;
    if (entry === undefined) throw new TypeError(`'${String(code)}' is not a FlotillaError code`);
    const message = format(entry.message, params);
    super(message, options);
    if (entry.base !== Error) {
      // an instance of FlotillaTypeError (say) stands in for this one: it is a TypeError, and `instanceof FlotillaError` by its brand
      const error = new (subclassOf(entry.base))(message, options);
      stamp(error, code);
      captureStack(error as Error & Coded, new.target);
      // biome-ignore lint/correctness/noConstructorReturn: the error must extend the code's base class
      return error as FlotillaError;
    }
    stamp(this, code);
    captureStack(this, new.target);
  }

  /** Every error made with a code, whatever its base class, is `instanceof FlotillaError`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && Object.hasOwn(value, BRAND);
  }

  override toString(): string {
    return codedToString.call(this);
  }
}

/**
 * Builds the error of a code from its template (the helper throw sites use).
 *
 * @example
 * throw createError('FLO_ERR_BAD_PREFIX', { prefix: 'api' }); // TypeError [FLO_ERR_BAD_PREFIX]: group prefix must start with '/', got 'api'
 * throw createError('FLO_ERR_I18N_DIRECTORY', { path: dir, reason: error.message }, { cause: error });
 */
export function createError<C extends FlotillaErrorCode>(code: C, ...[params, options]: FlotillaErrorArgs<C>): FlotillaError & { code: C } {
  const error = new FlotillaError(code, params as Record<string, unknown> | undefined, options);
  captureStack(error, createError);
  return error as FlotillaError & { code: C };
}

/**
 * A short description of a value that is not what was expected, for a message.
 *
 * @example
 * describeValue('nope'); // 'the string "nope"'
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
