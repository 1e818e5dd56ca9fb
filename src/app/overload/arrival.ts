import type { Admission } from './admission.ts';

/** When the request was read (`performance.now()` time), before any wait in the RequestQueue: its handler timeout counts from it. */
export const STARTED: unique symbol = Symbol('flotilla.arrival.started');
/** The RequestQueue judged the request already (see `QueuedHandler`): the admission control never sheds it. */
export const ADMITTED: unique symbol = Symbol('flotilla.arrival.admitted');
/** The RequestQueue's length when the request was served (see `Admission.admit`). */
export const BACKLOG: unique symbol = Symbol('flotilla.arrival.backlog');
/** The wait the RequestQueue expected for it, in milliseconds (see `Admission.admit`). */
export const EXPECTED_MS: unique symbol = Symbol('flotilla.arrival.expectedMs');

/**
 * How a request arrived, as the overload steps read it: written on it once (`Ctx` declares the
 * fields), so that the steps of its route take nothing but the request.
 */
export interface Arrival {
  [STARTED]: number;
  [ADMITTED]: boolean;
  [BACKLOG]: number;
  [EXPECTED_MS]: number;
}

/**
 * The admission control as a route's step: a request is shed before any of its route's work (no
 * hook, no middleware, no body read) by throwing what `refuse` makes, unless the RequestQueue
 * admitted it already.
 *
 * @example
 * const shed = shedStep(admission, () => KError.of('OVERLOADED', 'the server is overloaded: retry later'));
 * shed(ctx); // throws while the worker sheds
 */
export function shedStep(admission: Admission, refuse: () => Error): (request: Arrival) => void {
  return (request) => {
    if (request[ADMITTED]) return;
    if (!admission.admit(request[STARTED], performance.now(), request[BACKLOG], request[EXPECTED_MS])) throw refuse();
  };
}
