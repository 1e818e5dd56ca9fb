/**
 * The configuration, declared once: the JSON Schema of `KConfig` and the cluster keys. Every key
 * carries its `description` and, unless it has none, its `default`; from this one literal come
 * the validator (ajv, validate.ts), the defaults (defaults.ts), and the types (`FromSchema`,
 * types.ts). One schema validates the YAML file and `new App(config)`; unknown keys are errors.
 *
 * An object key whose default is `{}` is always present once resolved, holding its children's
 * defaults (what ajv's `useDefaults` does too); a key without `default` stays absent until given.
 * A test (test/config/schema-integrity.test.ts) checks that the keys, defaults, types and the
 * configuration reference's table (docs/reference/config.md) agree.
 */

import { SECURITY_REQUIREMENTS, SECURITY_SCHEMES } from './security-schema.ts';

/**
 * What every key of the schema says besides its type: what it means and, unless it has none, its
 * default. `object` requires it of each property, so a key without a description does not compile.
 */
interface Meta {
  readonly description: string;
  readonly default?: unknown;
  readonly deprecated?: boolean;
}

const int = <const M extends Meta>(minimum: number, maximum: number, meta: M) => ({ type: 'integer', minimum, maximum, ...meta }) as const;
/** A duration in milliseconds. */
const ms = <const M extends Meta>(minimum: number, maximum: number, meta: M) => int(minimum, maximum, meta);
const bool = <const M extends Meta>(meta: M) => ({ type: 'boolean', ...meta }) as const;
const text = <const M extends Meta>(meta: M) => ({ type: 'string', minLength: 1, maxLength: 1024, ...meta }) as const;
const path = <const M extends Meta>(meta: M) =>
  ({ type: 'string', pattern: "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$", maxLength: 256, ...meta }) as const;
const choice = <const V extends readonly string[], const M extends Meta>(values: V, meta: M) => ({ enum: values, ...meta }) as const;
const strings = <const I extends object, const M extends Meta>(items: I, meta: M) =>
  ({ type: 'array', items, maxItems: 256, ...meta }) as const;
const object = <const P extends Record<string, Meta>, const M extends Meta, const R extends readonly (keyof P & string)[] = []>(
  meta: M,
  properties: P,
  required: R = [] as unknown as R,
) => ({ type: 'object', additionalProperties: false, properties, required, ...meta }) as const;

/** The largest `workers` count the schema accepts. */
export const MAX_WORKERS = 1024;

const HTTP_METHOD = { enum: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE', 'OPTIONS'] } as const;
const HEADER_NAME = { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", maxLength: 128 } as const;
/** The default of an object key: present once resolved, with its children's defaults. */
const present = {} as const;

export const CONFIG_SCHEMA = object(
  { description: 'Configuration of an App, and the top level of the YAML file.' },
  {
    serviceName: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
      maxLength: 128,
      default: 'flotilla',
      description: 'Name of the service: in logs, the tracer, and the docs title while `docs.title` is left at its default.',
    },
    port: int(0, 65535, { default: 3000, description: 'HTTP port; `0` picks any free port.' }),
    host: text({ default: '0.0.0.0', description: 'Listening address.' }),
    env: choice(['development', 'staging', 'production'], {
      default: 'development',
      description:
        "`production` removes the docs routes, hides internal error details and refuses development secrets. Left out, it is `NODE_ENV` when that is one of the three, else the command's default: `production` for `flotilla start`, `development` for `flotilla dev` and a standalone `App`.",
    }),
    disableHealth: bool({ default: false, description: 'No `GET /health` route.' }),
    tls: object(
      {
        description:
          'TLS on the service port: each worker terminates it (with `cluster.balancing: primary` too: the primary hands over the raw connection). The pair is read again, and used for new handshakes, when the files change or on SIGHUP; one that does not parse or whose key does not match is refused and the previous pair stays.',
      },
      {
        certFile: text({
          description: 'PEM file of the certificate, followed by its intermediates (relative to the YAML file).',
        }),
        keyFile: text({ description: "PEM file of the certificate's private key, unencrypted (relative to the YAML file)." }),
        caFile: text({
          description:
            'PEM file of the certificate authorities that client certificates are verified against (relative to the YAML file); needed by `requestClientCert`.',
        }),
        minVersion: choice(['TLSv1.2', 'TLSv1.3'] as const, {
          description: 'The oldest TLS version a handshake may use (absent: `TLSv1.2`); `TLSv1.3` refuses TLS 1.2 clients.',
        }),
        ciphers: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          pattern: '^[A-Za-z0-9_+:!@=.-]+$',
          description:
            'The TLS 1.2 cipher suites, an OpenSSL cipher list (absent: forward-secret AEAD suites only, ECDHE with AES-GCM or ChaCha20-Poly1305, as in the intermediate profile). TLS 1.3 suites are not affected.',
        },
        requestClientCert: bool({
          description:
            'Mutual TLS (absent: `false`): every client must present a certificate that `caFile` verifies; a handshake without one, or with one it does not verify, is refused.',
        }),
      },
      ['certFile', 'keyFile'],
    ),
    http2: bool({
      default: false,
      description:
        'HTTP/2 on the service port beside HTTP/1.1: over TLS, ALPN chooses; without TLS, a connection that opens with the HTTP/2 preface speaks h2c (prior knowledge), any other HTTP/1.1. WebSockets stay on HTTP/1.1.',
    }),
    trustProxy: {
      oneOf: [
        { type: 'integer', minimum: 0, maximum: 64 },
        {
          type: 'array',
          maxItems: 1024,
          items: {
            type: 'string',
            maxLength: 64,
            pattern: '^([0-9]{1,3}(\\.[0-9]{1,3}){3}(/[0-9]{1,2})?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(/[0-9]{1,3})?)$',
          },
        },
      ],
      default: 0,
      description:
        'The proxies whose forwarding headers (`Forwarded`, `X-Forwarded-For`/`-Proto`/`-Host`) are believed: a hop count (the N nearest, whoever they are), or their addresses and CIDRs (`10.0.0.0/8`, `::1`). `ctx.ip`, `ctx.protocol` and `ctx.host` then name the client, and the rate limits, request logs and cross-origin checks use them. `0`: none, the socket is the client.',
    },
    trustProxyHeader: choice(['x-forwarded', 'forwarded'] as const, {
      default: 'x-forwarded',
      description:
        "Which forwarding headers the trusted proxies set: `x-forwarded` (`X-Forwarded-For`, `-Proto`, `-Host`: nginx, HAProxy, cloud load balancers, ingress-nginx) or `forwarded` (RFC 7239 `Forwarded`). The other kind is ignored, since a proxy passes a client's copy through untouched.",
    }),
    docs: object(
      { default: present, description: 'The documentation page and its OpenAPI document (not served in production).' },
      {
        path: path({ default: '/docs', description: 'Path of the documentation page; `{path}/openapi.json` serves the document.' }),
        title: text({ default: 'flotilla', description: 'OpenAPI `info.title`; left at its default, the document shows `serviceName`.' }),
        version: text({ default: '1.0.0', description: 'Version of the described API (OpenAPI `info.version`).' }),
        description: { type: 'string', maxLength: 65536, description: 'Description of the API (OpenAPI `info.description`).' },
        contact: object(
          { description: 'Contact information of the API (OpenAPI `info.contact`).' },
          {
            name: text({ description: 'Name of the contact person or organization.' }),
            url: { type: 'string', format: 'uri', description: 'URL of the contact information.' },
            email: { type: 'string', format: 'email', description: 'Email address of the contact.' },
          },
        ),
        license: object(
          { description: 'License of the API (OpenAPI `info.license`).' },
          {
            name: text({ description: 'Name of the license, e.g. `MIT`.' }),
            identifier: {
              type: 'string',
              pattern: '^[A-Za-z0-9.+()-]+( (AND|OR|WITH) [A-Za-z0-9.+()-]+)*$',
              maxLength: 256,
              description: 'SPDX license expression of the API, e.g. `MIT` (OpenAPI 3.1); not together with `url`.',
            },
            url: { type: 'string', format: 'uri', description: 'URL of the license; not together with `identifier`.' },
          },
          ['name'],
        ),
        servers: strings(
          { type: 'string', pattern: '^\\S+( - .+)?$', maxLength: 1024 },
          { default: [], description: 'Servers of the API, each `"<url> - <description>"` (the description is optional).' },
        ),
        tags: {
          type: 'array',
          maxItems: 256,
          items: object(
            { description: 'A tag grouping operations.' },
            {
              name: text({ description: "Name of the tag, as in routes' `tags`." }),
              description: { type: 'string', description: 'Description of the tag.' },
            },
            ['name'],
          ),
          default: [],
          description: 'Tags grouping operations in the documentation.',
        },
        securitySchemes: SECURITY_SCHEMES,
        security: SECURITY_REQUIREMENTS,
      },
    ),
    cors: object(
      { default: present, description: 'Cross-origin resource sharing; off while `origins` is empty.' },
      {
        origins: strings(
          { type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$', maxLength: 256 },
          { default: [], description: "Allowed origins: exact origins (`https://app.example`), or `['*']` for any; empty: CORS off." },
        ),
        methods: strings(HTTP_METHOD, {
          default: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
          description: 'Methods a preflight answer allows (`Access-Control-Allow-Methods`).',
        }),
        allowedHeaders: strings(HEADER_NAME, {
          default: [],
          description: "Request headers a preflight answer allows (`Access-Control-Allow-Headers`); empty: the request's are echoed.",
        }),
        exposedHeaders: strings(HEADER_NAME, {
          default: ['X-Request-Id'],
          description: 'Response headers a page may read (`Access-Control-Expose-Headers`).',
        }),
        credentials: bool({ default: false, description: "Allow credentials; refused together with `'*'` in `origins`." }),
        maxAge: int(0, 86_400, { default: 600, description: 'Seconds a preflight answer may be cached (`Access-Control-Max-Age`).' }),
      },
    ),
    csrf: object(
      {
        default: present,
        description:
          'Cross-site request forgery protection: a `POST`, `PUT`, `PATCH`, `DELETE` or WebSocket upgrade a browser sends from another origin is refused 403 (an upgrade before the handshake) `CROSS_ORIGIN_REQUEST`, judged by `Sec-Fetch-Site`, else `Origin` against the request host; requests with neither header (curl, servers) pass.',
      },
      {
        enabled: bool({
          default: true,
          description: 'Refuse cross-origin unsafe requests and WebSocket upgrades from browsers; `false` turns the check off.',
        }),
        trustedOrigins: strings(
          { type: 'string', pattern: '^https?://[^/\\s]+$', maxLength: 256 },
          {
            default: [],
            description:
              'Origins whose unsafe requests are let through (`https://admin.example`); the exact origins of `cors.origins` are trusted too.',
          },
        ),
      },
    ),
    cookies: object(
      { default: present, description: 'Cookies (`ctx.cookies`): the secrets that sign them.' },
      {
        secrets: strings(
          { type: 'string', minLength: 32, maxLength: 4096 },
          {
            default: [],
            description:
              'Secrets of signed cookies (HMAC-SHA256), at least 32 characters each: the first signs, any verifies, so a new secret goes first and the old one stays until the cookies it signed have expired. Redacted by `flotilla config`. Empty: `signed: true` is an error.',
          },
        ),
      },
    ),
    sessions: object(
      {
        default: present,
        description:
          'Server-side sessions (`await ctx.session()`): the data is kept in a store, the client holds only its id, in a cookie signed with `cookies.secrets`.',
      },
      {
        store: choice(['memory', 'coordination'] as const, {
          default: 'memory',
          description:
            '`memory`: held by the primary for the whole pod (every worker sees the same sessions; they survive worker restarts, not a restart of the pod); `coordination`: Redis or PostgreSQL at `coordination.url`, shared by every replica.',
        }),
        ttlMs: ms(1_000, 31_536_000_000, {
          default: 86_400_000,
          description:
            'How long a session lives without a request: each request that reads it extends it (rolling expiry, renewed once a tenth of it has passed), and the cookie with it.',
        }),
        cookieName: {
          type: 'string',
          pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$",
          default: 'sid',
          description:
            'The name of the cookie holding the session id (`HttpOnly`, `SameSite=Lax`, `Secure` over HTTPS and outside development).',
        },
        maxBytes: int(64, 1_048_576, {
          default: 16_384,
          description:
            "Most bytes of one session's data as JSON; a larger session is not saved and its request fails (500, logged with the size).",
        }),
        memoryBytes: int(1_048_576, 17_179_869_184, {
          default: 67_108_864,
          description:
            'With `store: memory`: most bytes of the heap all sessions may take, each counted for its id and data as stored plus 106 bytes of bookkeeping (about 186 bytes for an anonymous session). Past it, the sessions saved least recently are dropped to make room (a warning says how many, at most once a minute): a flood of new sessions cannot exhaust the memory of the process that keeps them.',
        }),
      },
    ),
    compression: object(
      { default: present, description: 'Compression of response bodies, negotiated from `Accept-Encoding`.' },
      {
        enabled: bool({
          default: true,
          description:
            'Compress compressible replies (JSON, text, XML, JavaScript, SVG…) of at least `thresholdBytes` with the best encoding the client accepts; `Vary: Accept-Encoding` on every compressible reply. Off when an ingress compresses.',
        }),
        thresholdBytes: int(0, 1_073_741_824, {
          default: 1_024,
          description: 'Buffered bodies smaller than this are sent as they are (streams are always compressed, their size being unknown).',
        }),
        encodings: {
          type: 'array',
          items: { enum: ['zstd', 'br', 'gzip'] },
          minItems: 1,
          uniqueItems: true,
          default: ['zstd', 'br', 'gzip'],
          description: "The encodings offered, in the server's order of preference among those the client weighs equally.",
        },
      },
    ),
    securityHeaders: object(
      { default: present, description: 'Security headers on every reply; a route may replace any of them with `ctx.setHeader`.' },
      {
        enabled: bool({ default: true, description: 'Send the headers below; `false` sends none of them.' }),
        contentTypeOptions: bool({ default: true, description: '`X-Content-Type-Options: nosniff`.' }),
        frameOptions: {
          enum: ['DENY', 'SAMEORIGIN', false],
          default: 'DENY',
          description: '`X-Frame-Options`; `false` sends none.',
        },
        contentSecurityPolicy: {
          type: 'string',
          maxLength: 4096,
          pattern: '^[\\x20-\\x7E]*$',
          default: "frame-ancestors 'none'",
          description:
            '`Content-Security-Policy` of every reply (the docs page sends its own); empty sends none. The default only forbids framing, as `X-Frame-Options` does for older browsers.',
        },
        referrerPolicy: {
          enum: [
            'no-referrer',
            'no-referrer-when-downgrade',
            'origin',
            'origin-when-cross-origin',
            'same-origin',
            'strict-origin',
            'strict-origin-when-cross-origin',
            'unsafe-url',
            false,
          ],
          default: 'no-referrer',
          description: '`Referrer-Policy`; `false` sends none.',
        },
        crossOriginResourcePolicy: {
          enum: ['same-origin', 'same-site', 'cross-origin', false],
          default: 'same-origin',
          description:
            '`Cross-Origin-Resource-Policy`: which sites may embed the replies without CORS (`<img>`, `<script>`); CORS requests are not affected. `false` sends none.',
        },
        strictTransportSecurity: bool({
          default: false,
          description:
            '`Strict-Transport-Security`: opt in once every client reaches the service over HTTPS (an ingress terminating TLS counts); browsers then refuse plain HTTP for `hstsMaxAgeS`.',
        }),
        hstsMaxAgeS: int(0, 63_072_000, {
          default: 31_536_000,
          description: '`max-age` of `Strict-Transport-Security`, in seconds (a year).',
        }),
        hstsIncludeSubDomains: bool({ default: true, description: '`includeSubDomains` in `Strict-Transport-Security`.' }),
        hstsPreload: bool({
          default: false,
          description: '`preload` in `Strict-Transport-Security` (ask for it only when submitting the domain to the preload list).',
        }),
      },
    ),
    limits: object(
      { default: present, description: 'Limits on the size of requests.' },
      {
        bodyBytes: int(0, 1_073_741_824, {
          default: 1_048_576,
          description: 'Largest accepted request body, in bytes (413 beyond, counted while streaming). Default 1 MiB.',
        }),
        paramLength: int(1, 65_536, { default: 100, description: 'Longest accepted route parameter, in characters.' }),
        headerBytes: int(1_024, 1_048_576, {
          default: 16_384,
          description: 'Largest accepted request head (request line + headers), in bytes (431 beyond). Default 16 KiB.',
        }),
        concurrentStreams: int(1, 10_000, {
          default: 100,
          description:
            'HTTP/2: the streams (requests) one connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`); the client is refused more with `REFUSED_STREAM`.',
        }),
      },
    ),
    timeouts: object(
      { default: present, description: 'Timeouts of requests and connections, in milliseconds.' },
      {
        headersMs: ms(1, 3_600_000, { default: 10_000, description: 'Time allowed to receive the complete request head.' }),
        requestMs: ms(1, 3_600_000, { default: 30_000, description: 'Time allowed to receive the complete request.' }),
        keepAliveMs: ms(1, 3_600_000, { default: 72_000, description: "Idle keep-alive timeout; above common load balancers' 60 s." }),
        socketMs: ms(1, 3_600_000, {
          default: 30_000,
          description:
            'A connection with no traffic either way for this long while a request is served is reset, freeing its unsent data (slow readers).',
        }),
        handlerMs: ms(0, 3_600_000, {
          default: 20_000,
          description:
            "A request whose handler (middlewares included) is still running after this long is answered 503 (`HANDLER_TIMEOUT`) and its `ctx.context().signal` aborts with a `TimeoutError`; what the handler writes later is discarded. A route's `timeoutMs` overrides it; `0` turns it off. Below `socketMs` and the 60 s of common load balancers, so the client gets an answer from the service rather than a reset or a 504.",
        }),
      },
    ),
    overload: object(
      {
        default: present,
        description:
          'Overload protection: past its capacity the cluster serves near capacity and answers the excess at once with 503 (`OVERLOADED`) and `Retry-After`.',
      },
      {
        enabled: bool({
          default: true,
          description:
            "The primary's queue deadline and the workers' admission control; `false` queues every request, as node:cluster does.",
        }),
        queueTargetMs: ms(1, 60_000, {
          default: 20,
          description:
            'Cluster mode, `balancing: primary`: once the oldest connection waiting in the primary for a worker has waited longer than this for a whole `queueIntervalMs` (a standing queue), the primary answers 503 every connection that waits longer than this, until its queue empties.',
        }),
        queueIntervalMs: ms(1, 60_000, {
          default: 100,
          description:
            'Cluster mode, `balancing: primary`: how long the oldest wait must stay above `queueTargetMs` before the primary sheds: a burst shorter than this waits (at most about `queueTargetMs + queueIntervalMs`).',
        }),
        delayTargetMs: ms(1, 60_000, {
          default: 50,
          description:
            'Once the wait of its requests (unread while its event loop was busy, then in its request queue) has stayed above `shedAfterMs` for `delayIntervalMs` and is now above this, a worker (or a standalone App) starts shedding: requests on keep-alive connections and with `balancing: kernel` queue in the worker itself, where the primary cannot see them.',
        }),
        delayIntervalMs: ms(1, 60_000, {
          default: 50,
          description:
            "How long the requests' wait must stay above `shedAfterMs` (a standing queue) before a worker sheds, and at most `shedAfterMs` before it admits again.",
        }),
        shedAfterMs: ms(1, 60_000, {
          default: 15,
          description:
            'While a worker sheds, the requests that waited longer than this are answered 503 and the others served: the excess gets a fast answer, the rest a short wait. At most `delayTargetMs` (a smaller `delayTargetMs` lowers it); keep it above the time one request takes to serve.',
        }),
        retryAfterS: int(0, 86_400, {
          default: 1,
          description: 'The `Retry-After` of an `OVERLOADED` 503, in seconds.',
        }),
      },
    ),
    websockets: object(
      {
        default: present,
        description: "WebSocket routes (a route's `websocket` option) and `app.publish`: limits per socket and per process.",
      },
      {
        maxMessageBytes: int(1, 67_108_864, {
          default: 1_048_576,
          description:
            'The largest message a client may send, and the largest `app.publish` payload, in bytes: a larger incoming message closes its socket with 1009 (message too big); a larger publish throws.',
        }),
        maxConnections: int(0, 1_000_000, {
          default: 10_000,
          description: 'Open sockets per process (each worker); an upgrade beyond it is answered 503 (`TOO_MANY_WEBSOCKETS`).',
        }),
        pingIntervalMs: ms(0, 3_600_000, {
          default: 30_000,
          description:
            'Every socket is pinged this often; one that has not answered the previous ping (a dead peer) is terminated. `0` turns the keepalive off.',
        }),
        maxBufferedBytes: int(1_024, 1_073_741_824, {
          default: 1_048_576,
          description:
            "A socket whose unsent data exceeds this many bytes (a slow consumer) is closed with 1013 (try again later) instead of growing the process's memory.",
        }),
        metricTopics: strings(
          { type: 'string', minLength: 1, maxLength: 256 },
          {
            default: [],
            description:
              'Topics counted under their own name in `flotilla_websocket_publishes_total{topic}`; every other topic is counted as `other`, so that the number of series stays bounded whatever topics clients make up.',
          },
        ),
        closeTimeoutMs: ms(1, 60_000, {
          default: 1_000,
          description:
            "A socket closed by the server (the drain's 1001, a slow consumer's 1013) that has not finished the closing handshake after this long is terminated; never later than the shutdown's deadline.",
        }),
      },
    ),
    logging: object(
      { default: present, description: 'Logging: JSON lines on stdout (pino).' },
      {
        level: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'Log level.' }),
        requests: bool({ default: true, description: 'One log line per request.' }),
        pretty: bool({
          default: false,
          description:
            'Human-readable colored lines instead of JSON, for development (`flotilla dev` turns it on); needs the `pino-pretty` package.',
        }),
      },
    ),
    health: object(
      { default: present, description: 'The `GET /health` route.' },
      { timeoutMs: ms(1, 60_000, { default: 2_000, description: 'Timeout of each health checker, in milliseconds.' }) },
    ),
    shutdown: object(
      { default: present, description: 'Graceful shutdown.' },
      {
        timeoutMs: ms(1, 600_000, {
          default: 10_000,
          description: "The shutdown budget: hooks' signal aborts this long after shutdown began, in milliseconds.",
        }),
        drainDelayMs: ms(0, 600_000, {
          default: 0,
          description: 'Wait this long with `/health` at 503 before closing the listener, so load balancers notice; spent from the budget.',
        }),
      },
    ),
    metrics: object(
      { default: present, description: 'Prometheus metrics.' },
      {
        enabled: bool({ default: true, description: 'Collect request metrics.' }),
        port: int(0, 65535, {
          default: 9464,
          description: 'Port of the Prometheus endpoint (the primary in cluster mode, the App itself standalone).',
        }),
        host: text({ default: '0.0.0.0', description: 'Listening address of the Prometheus endpoint.' }),
        path: path({ default: '/metrics', description: 'Path of the Prometheus endpoint.' }),
      },
    ),
    i18n: object(
      { description: 'Message catalogs for `ctx.t` and translated problem details.' },
      {
        directory: text({
          description: 'Directory of message catalogs, one `<locale>.yaml` or `.json` file per locale (relative to the YAML file).',
        }),
        defaultLocale: {
          type: 'string',
          pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
          description: "Locale used when the request's `Accept-Language` matches none, and for missing keys.",
        },
      },
      ['directory', 'defaultLocale'],
    ),
    rateLimit: object(
      {
        description:
          "A rate limit on every route of the App (not `/health` nor the docs): at most `max` requests per client address in each window of `windowMs`, counted by every worker (and, with `coordination.url`, every replica); more are answered 429 `RATE_LIMITED`. A group's or a route's `rateLimit` overrides it; in code, `new App({ rateLimit })` also takes a `key` function.",
      },
      {
        max: int(1, Number.MAX_SAFE_INTEGER, { description: 'Requests admitted per client and window.' }),
        windowMs: ms(1, 2_073_600_000, {
          description: 'The window, in milliseconds; it starts with the first request of a client that has none running.',
        }),
        onStoreError: choice(['open', 'closed'], {
          description:
            'When the count cannot be had (the coordinator unreachable, the primary not answering in time): `open` (the default when absent) admits the request, `closed` answers 503 `UNAVAILABLE`.',
        }),
        ipv6Subnet: int(1, 128, {
          description:
            'The default key groups IPv6 clients by this prefix length (absent: `56`, what a provider hands one customer), so a client cannot rotate through the addresses of its own network; `128` counts each address alone.',
        }),
        hook: choice(['onRequest', 'preHandler'], {
          description:
            'Where the limit is checked: `onRequest` (the default when absent) before the hooks, the validation and the body; `preHandler` after them, just before the handler (a `key` in code may then read `ctx.body`).',
        }),
      },
      ['max', 'windowMs'],
    ),
    workers: {
      oneOf: [
        { type: 'integer', minimum: 1, maximum: MAX_WORKERS },
        { const: 'auto' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['min', 'max'],
          properties: {
            min: { type: 'integer', minimum: 1, maximum: MAX_WORKERS },
            max: { oneOf: [{ type: 'integer', minimum: 1, maximum: MAX_WORKERS }, { const: 'auto' }] },
          },
        },
      ],
      default: 'auto',
      description:
        'Cluster mode: number of workers, `auto` for the CPUs the container may use (`os.availableParallelism()` capped by the cgroup CPU quota), or `{ min, max }` (`max` may be `auto`): the tree starts with `min` and follows its load between the two (see `cluster.scaleDownAfterMs`).',
    },
    service: text({ description: "Cluster mode: path of the service's setup module, relative to the YAML file." }),
    preload: strings(
      { type: 'string', minLength: 1, maxLength: 1024 },
      {
        default: [],
        description:
          "Cluster mode: modules (paths relative to the YAML file) each worker's main thread imports before flotilla and the service (in its entry module, not with `--import`, which its watchdog thread would inherit), and the service thread before the service: where an OpenTelemetry SDK is registered. Each new worker and service thread reads the list as it starts (a reload's take a changed one).",
      },
    ),
    dev: object(
      { default: present, description: "`flotilla dev` only: what it watches besides the service's folder and the config file." },
      {
        watch: strings(
          { type: 'string', minLength: 1, maxLength: 1024 },
          {
            default: ['migrations'],
            description:
              "More folders or files for `flotilla dev` to watch, relative to the YAML file (one that does not exist yet is watched once it appears): a save there replaces the worker as a save of the service does, and the primary's `beforeServe` hooks (migrations) run again. Read once at start.",
          },
        ),
      },
    ),
    settings: {
      type: 'object',
      description:
        "The service's own settings, validated by the JSON Schema its module declares (`defineService({ settings, setup })`) and read as `app.settings`; an error without one.",
    },
    cluster: object(
      { default: present, description: 'Cluster mode: how the primary supervises its workers.' },
      {
        startupTimeoutMs: ms(1, 3_600_000, { default: 10_000, description: 'A worker must be listening within this time.' }),
        backoffInitialMs: ms(0, 3_600_000, { default: 100, description: 'First restart delay.' }),
        backoffMaxMs: ms(0, 3_600_000, { default: 5_000, description: 'Largest restart delay.' }),
        stableAfterMs: ms(0, 3_600_000, { default: 30_000, description: 'A worker up this long resets the backoff.' }),
        crashLoopFailures: int(1, 1000, {
          default: 5,
          description: 'This many early failures within `crashLoopWindowMs` make the primary give up.',
        }),
        crashLoopWindowMs: ms(1, 3_600_000, { default: 60_000, description: 'The window of `crashLoopFailures`.' }),
        scrapeTimeoutMs: ms(1, 60_000, {
          default: 1_000,
          deprecated: true,
          description:
            'Deprecated, no effect: scrapes are answered from the metric snapshots workers push every `metricsIntervalMs`. Still accepted so that existing files stay valid.',
        }),
        heartbeatIntervalMs: ms(10, 3_600_000, { default: 1_000, description: 'The primary pings each worker over IPC this often.' }),
        heartbeatTimeoutMs: ms(0, 3_600_000, {
          default: 10_000,
          description:
            'A worker that has not answered the pings for this long is stuck (a blocked event loop) and is replaced. Must exceed `heartbeatIntervalMs`; `0` turns the watchdog off.',
        }),
        maxMemoryMB: int(0, 1_048_576, {
          default: 0,
          description:
            'A worker whose resident set size (RSS) stays above this many MiB is recycled gracefully (a new worker takes its slot, then it shuts down within the budget). `0` turns it off.',
        }),
        maxRequests: int(0, Number.MAX_SAFE_INTEGER, {
          default: 0,
          description:
            'A worker that served `maxRequests` plus a random `0..maxRequestsJitter` requests is recycled gracefully (a bound on slow leaks). `0` turns it off.',
        }),
        maxRequestsJitter: int(0, Number.MAX_SAFE_INTEGER, {
          default: 0,
          description:
            'Up to this many more requests per worker, drawn at random for each, so that workers started together are not recycled together. Requires `maxRequests`.',
        }),
        balancing: choice(['primary', 'kernel'], {
          default: 'kernel',
          description:
            "Who hands connections to workers: `kernel` (one listening socket the primary opens and shares with the workers, node:cluster's `SCHED_NONE`: a free worker accepts the next connection from its queue, so a busy or stuck worker takes none and a killed one loses none of those queued; no hop through the primary) or `primary` (the primary accepts each connection and hands it to the worker with the fewest unacknowledged hand-offs over IPC; what no worker can take waits in the primary's queue, see `overload`).",
        }),
        metricsIntervalMs: ms(100, 3_600_000, {
          default: 1_000,
          description: 'Workers push their metric snapshot to the primary this often.',
        }),
        allowFastRestarts: bool({
          default: false,
          description:
            'Opt in to `backoffMaxMs` below 100 together with `crashLoopFailures` above 10, refused otherwise: crashing workers would be forked in a tight loop, and the primary would take long to give up.',
        }),
        scaleDownAfterMs: ms(1_000, 3_600_000, {
          default: 60_000,
          description:
            'With `workers: { min, max }`: how long the workers must stay lightly used before one is retired (gracefully, never below `min`).',
        }),
        allowOversubscription: bool({
          default: false,
          description: 'Opt in to a numeric `workers` above 4 × the CPUs available, refused otherwise.',
        }),
      },
    ),
    coordination: object(
      {
        default: present,
        description:
          'Schedulers across replicas: each cron fire runs on one replica, other schedulers on the holder of a lease. Off without `url`.',
      },
      {
        url: {
          type: 'string',
          pattern: '^$|^(redis|rediss|postgres|postgresql)://\\S+$',
          maxLength: 2048,
          description:
            'The coordinator: `redis://` or `rediss://` (Redis), `postgres://` or `postgresql://` (PostgreSQL), typically from the environment. Empty or absent: every replica runs every scheduler.',
        },
        leaseTtlMs: ms(1_000, 3_600_000, {
          default: 15_000,
          description:
            'A lease not renewed for this long expires: the longest time before another replica takes over the lease-based schedulers of a dead holder.',
        }),
        leaseRenewMs: ms(100, 1_200_000, {
          default: 5_000,
          description:
            'The lease holder renews it this often, and the other replicas try to take it this often. `leaseRenewMs + 2 × timeoutMs` must be less than `leaseTtlMs`.',
        }),
        maxClockSkewMs: ms(1_000, 3_600_000, {
          default: 30_000,
          description:
            "A cron fire is claimed only while the coordinator's clock is within this of its scheduled time (a replica further off skips it, reason `clock-skew`); a claim is kept twice as long.",
        }),
        timeoutMs: ms(50, 60_000, {
          default: 1_000,
          description:
            'Each exchange with the coordinator (connection, claim, lease renewal) fails after this long: the fire is skipped, the lease lost.',
        }),
      },
    ),
  },
);
