import type * as Http2 from 'node:http2';

/**
 * node:http2's compatibility request and response, made to read as node:http's where the pipeline
 * relies on it, at no cost to HTTP/1.1:
 * - the request has a `Host` header when it has an `:authority` (RFC 9113 §8.3.1: they name the
 *   same thing), so `ctx.host`, CORS and the cross-origin checks read it as on HTTP/1.1;
 * - a request whose HEADERS frame did not end the stream has a body: without a `Content-Length`
 *   (optional on HTTP/2, where the stream's end ends the body), it says `Transfer-Encoding: chunked`,
 *   as an HTTP/1.1 body of unknown length does, so the body readers (and Connect middlewares, which
 *   ask the same headers) read it rather than take it for none;
 * - the response has node:http's `destroyed` (its stream's), which tells a gone client;
 * - `Connection` (and the other HTTP/1.1 connection headers) set on the response are dropped
 *   silently: HTTP/2 forbids them (RFC 9113 §8.2.2), and a connection is closed with GOAWAY instead;
 * - `setHeader` returns the response, as node:http's does, so that calls chain (Connect middlewares).
 *
 * @example
 * const classes = compatClasses(require('node:http2'));
 * http2.createSecureServer({ ...classes, allowHTTP1: true });
 */
export function compatClasses(http2: typeof Http2) {
  class Http2ServerRequest extends http2.Http2ServerRequest {
    constructor(stream: Http2.ServerHttp2Stream, headers: Http2.IncomingHttpHeaders, options: object, rawHeaders: string[]) {
      super(stream, headers, options as never, rawHeaders);
      const authority = headers[':authority'];
      if (headers.host === undefined && typeof authority === 'string') headers.host = authority;
      if (!stream.endAfterHeaders && headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
    }
  }
  class Http2ServerResponse extends http2.Http2ServerResponse {
    override setHeader(name: string, value: number | string | readonly string[]): this {
      if (!CONNECTION_HEADERS.has(name.toLowerCase())) super.setHeader(name, value);
      return this;
    }
  }
  // an accessor (node:http2 has no such property, its types say one)
  Object.defineProperty(Http2ServerResponse.prototype, 'destroyed', {
    get(this: Http2.Http2ServerResponse) {
      return this.stream.destroyed;
    },
  });
  return { Http2ServerRequest, Http2ServerResponse } as unknown as {
    Http2ServerRequest: typeof Http2.Http2ServerRequest;
    Http2ServerResponse: typeof Http2.Http2ServerResponse;
  };
}

/** The headers HTTP/2 refuses (RFC 9113 §8.2.2). */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);
