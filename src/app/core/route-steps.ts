import type { ServerResponse } from 'node:http';
import type { HandlerTimeouts } from '../overload/handler-timeouts.ts';
import type { Ctx } from './ctx.ts';
import type { RouteFacts } from './router.ts';
import type { Step } from './steps.ts';

/** What a route's step may use of the pipeline it runs in (see `createRequestHandler`). */
export interface StepPipeline {
  /** The handler timeouts of the pipeline's requests. */
  readonly timeouts: HandlerTimeouts<Ctx>;
}

/**
 * Makes a route's step once, at registration, from what the route declares; `undefined`: the route
 * has no such step, and its requests pay nothing for it.
 */
export type RouteStepFactory = (route: RouteFacts, pipeline: StepPipeline) => Step | undefined;

/**
 * The built-in steps of an App's pipeline, in the order they run (see `appPipelineHost`, where they
 * are listed).
 */
export interface PipelineSteps {
  /**
   * Every request's, before its route is looked up (a path no route matches too): synchronous, and
   * done with the request once one chooses its reply (a CORS preflight's 204).
   */
  readonly arrival: readonly ((ctx: Ctx) => void)[];
  /** Each route's, made at registration: the route's own list is these, then its middlewares, body and handler. */
  readonly route: readonly RouteStepFactory[];
  /** Run on the reply's headers right before it is written, an error's included (CORS's `Vary: Origin`). */
  readonly beforeReply: readonly ((res: ServerResponse) => void)[];
}

/**
 * A route's steps, in order: those its factories make for it, then its work (`run`: middlewares,
 * body and handler).
 *
 * @example
 * const steps = routeSteps(host.steps.route, facts, { timeouts }); // [shed, timeout, hooks, …, run]
 */
export function routeSteps(factories: readonly RouteStepFactory[], route: RouteFacts, pipeline: StepPipeline): readonly Step[] {
  const steps: Step[] = [];
  for (const factory of factories) {
    const step = factory(route, pipeline);
    if (step !== undefined) steps.push(step);
  }
  steps.push(route.run);
  return steps;
}
