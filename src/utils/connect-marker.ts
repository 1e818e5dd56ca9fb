const CONNECT = Symbol('flotilla.connect');

/**
 * Marks a middleware as a connect one (`fromConnect`): a route with one reads its body before its
 * middlewares unless it says otherwise (`bodyBeforeMiddlewares`), since connect middlewares read
 * `req.body`.
 *
 * @example
 * return markConnect((ctx, next) => run(middleware, ctx, next));
 */
export function markConnect<M extends object>(middleware: M): M {
  Object.defineProperty(middleware, CONNECT, { value: true });
  return middleware;
}

/** Whether `middleware` came from `fromConnect`. */
export function isConnect(middleware: object): boolean {
  return CONNECT in middleware;
}
