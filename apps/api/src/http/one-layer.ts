import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares that every request passes, run from one Express layer: each layer costs the router a
 * dispatch (its `next`, a path match, the prototype and param bookkeeping) on every request, and
 * these run for every path anyway. They run in order as separate layers would: `next()` goes on to
 * the following one, `next(error)` leaves the sequence with the error (the layers after it are
 * skipped, as Express skips plain middlewares when an error is pending), `next('router')` leaves the
 * router, a synchronous throw or a rejected promise becomes `next(error)`. Only root-mounted request handlers belong here
 * (no path, no error handler).
 */
export function inOneLayer(...handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error && error !== 'route') {
        next(error);
        return;
      }
      const handler = handlers[index++];
      if (!handler) {
        next();
        return;
      }
      try {
        // An async handler's rejection is passed on, as Express 5 does for a layer's promise.
        const returned: unknown = handler(req, res, step);
        if (returned instanceof Promise) returned.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
