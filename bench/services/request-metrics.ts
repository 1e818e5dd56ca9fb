import { Counter, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS } from './data.ts';

/** The prom-client counter + histogram the non-flotilla contenders record per request, as flotilla's collector does. */
export function requestMetrics(): (method: string, route: string, status: number, durationMs: number) => void {
  const registers = [new Registry()];
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests handled.', labelNames, registers });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to handle an HTTP request, in seconds.',
    labelNames,
    buckets: DURATION_BUCKETS,
    registers,
  });
  return (method, route, status, durationMs) => {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    duration.observe(labels, durationMs / 1000);
  };
}
