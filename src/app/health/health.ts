import { describeThrown } from '../../errors/problem.ts';
import type { HealthChecker } from '../core/registrar.ts';
import type { Route } from '../core/route.ts';

export interface CheckResult {
  status: 'pass' | 'fail';
  durationMs: number;
  output?: string;
}

export interface HealthReport {
  status: 'pass' | 'fail';
  checks: Record<string, CheckResult>;
  output?: string;
}

interface HealthSource {
  readonly checkers: readonly HealthChecker[];
  readonly draining: boolean;
  readonly timeoutMs: number;
  readonly production: boolean;
}

/** Runs every checker in parallel, each bounded by the timeout; `onFailure` hears why a checker failed. */
export async function runHealthChecks(
  source: HealthSource,
  onFailure: (name: string, error: unknown) => void = () => {},
): Promise<HealthReport> {
  if (source.draining) return { status: 'fail', checks: {}, output: 'shutting down' };
  const results = await Promise.all(source.checkers.map((c) => runOne(c, source.timeoutMs, source.production, onFailure)));
  const checks: Record<string, CheckResult> = Object.create(null);
  for (const [i, checker] of source.checkers.entries()) checks[checker.name] = results[i]!;
  return { status: results.every((r) => r.status === 'pass') ? 'pass' : 'fail', checks: { ...checks } };
}

async function runOne(
  checker: HealthChecker,
  timeoutMs: number,
  production: boolean,
  onFailure: (name: string, error: unknown) => void,
): Promise<CheckResult> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => checker.check(controller.signal)), timeout]);
    return { status: 'pass', durationMs: elapsed(started) };
  } catch (error) {
    const result: CheckResult = { status: 'fail', durationMs: elapsed(started) };
    if (!production) result.output = describeThrown(error);
    onFailure(checker.name, error);
    return result;
  } finally {
    clearTimeout(timer);
  }
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 100) / 100;
}

const CHECK_SCHEMA = {
  type: 'object',
  required: ['status', 'durationMs'],
  properties: { status: { enum: ['pass', 'fail'] }, durationMs: { type: 'number' }, output: { type: 'string' } },
};
const HEALTH_SCHEMA = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { enum: ['pass', 'fail'] },
    checks: { type: 'object', additionalProperties: CHECK_SCHEMA },
    output: { type: 'string' },
  },
};

/** `GET {path}`: 200 when every checker passes, 503 when one fails or while shutting down (`application/health+json`). */
export function healthRoute(path: string, source: HealthSource): Route {
  return {
    method: 'GET',
    path,
    summary: 'Health of the service',
    description:
      'Runs every registered health check in parallel, each within its time limit: 200 when all pass, 503 when one fails or while the service shuts down (take it out of the load balancer).',
    tags: ['health'],
    // probes carry no credentials
    security: [],
    schema: {
      // documented with the media type it is served with
      response: {
        200: { description: 'Every check passes', content: { 'application/health+json': { schema: HEALTH_SCHEMA } } },
        503: {
          description: 'A check fails, or the service is shutting down',
          content: { 'application/health+json': { schema: HEALTH_SCHEMA } },
        },
      },
    },
    handler: async (ctx) => {
      // the reason is logged with the request id: in production it is the only place it appears
      const report = await runHealthChecks(source, (check, err) => {
        try {
          ctx.logger.warn({ check, err }, 'health check failed');
        } catch {
          ctx.logger.warn({ check }, 'health check failed');
        }
      });
      ctx.status(report.status === 'pass' ? 200 : 503).setHeader('Cache-Control', 'no-store');
      ctx.send(JSON.stringify(report), 'application/health+json');
    },
  };
}
