import { Counter, type Registry } from './prom-client.ts';

/** A request's or a connection's protocol on the wire: HTTP/1.1 or HTTP/2, over TLS or not. */
export interface WireLabels {
  readonly protocol: 'h1' | 'h2';
  readonly tls: boolean;
}

/** What the pipeline reads of a request to label it (node:http's and node:http2's requests alike). */
export interface WireRequest {
  readonly httpVersionMajor: number;
  readonly socket: unknown;
}

/**
 * The protocols an App serves, counted: `flotilla_requests_by_protocol_total{protocol,tls}` and
 * `flotilla_connections_total{protocol,tls}` (`protocol`: `h1` or `h2`; `tls`: `true` or
 * `false`, at most four series each). Plain counts bumped per request and per connection, turned
 * into the counters at each scrape; registered only by an App with `tls` or `http2`, so that a plain
 * HTTP/1.1 App pays nothing per request. Workers' counts are summed by the primary.
 *
 * @example
 * const wire = new WireMetrics(registry, true);
 * wire.request(req); // { protocol: 'h2', tls: true }
 */
export class WireMetrics {
  readonly #tls: boolean;
  readonly #requests = { h1: 0, h2: 0 };
  readonly #connections = { h1: 0, h2: 0 };
  readonly #labels: { readonly h1: WireLabels; readonly h2: WireLabels };

  /** `tls`: every connection of the App is (a TLS App serves nothing in clear). */
  constructor(registry: Registry | undefined, tls: boolean) {
    this.#tls = tls;
    this.#labels = { h1: { protocol: 'h1', tls }, h2: { protocol: 'h2', tls } };
    if (registry === undefined) return;
    const counts = (name: string, help: string, of: { h1: number; h2: number }) =>
      new Counter({
        name,
        help,
        labelNames: ['protocol', 'tls'],
        registers: [registry],
        collect() {
          this.reset();
          for (const protocol of ['h1', 'h2'] as const) this.inc({ protocol, tls: String(tls) }, of[protocol]);
        },
      });
    counts('flotilla_requests_by_protocol_total', 'Requests received, by protocol (h1, h2) and whether over TLS.', this.#requests);
    counts(
      'flotilla_connections_total',
      'Connections accepted (HTTP/1.1) and HTTP/2 sessions, by protocol and whether over TLS.',
      this.#connections,
    );
  }

  get tls(): boolean {
    return this.#tls;
  }

  /** A request arrived: counted, and its labels returned (for its log line). */
  request(req: WireRequest): WireLabels {
    const protocol = req.httpVersionMajor === 2 ? 'h2' : 'h1';
    this.#requests[protocol]++;
    return this.#labels[protocol];
  }

  /** A connection (HTTP/1.1) or a session (HTTP/2) started. */
  connection(protocol: 'h1' | 'h2'): void {
    this.#connections[protocol]++;
  }
}
