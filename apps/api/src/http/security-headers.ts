import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/** The app's security headers: helmet's defaults with these changes. */
export const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      // Angular Material and Swagger UI set inline styles; scripts stay same-origin only.
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:', 'blob:'],
      'upgrade-insecure-requests': null,
    },
  },
  // Served over plain HTTP on loopback by default: HSTS would lock a browser out.
  strictTransportSecurity: false,
};

/** What helmet does to a response: headers set (in its order) and headers removed. */
export interface HeaderPlan {
  set: Array<[name: string, value: string]>;
  removed: string[];
}

/**
 * Helmet's headers for `options`, worked out once: helmet is run on a
 * recording response. With static options (no function in a CSP directive,
 * which would read the request, e.g. for a nonce) every response gets exactly
 * these, so they need not be recomputed through helmet's dozen middlewares on
 * each request.
 */
export function helmetHeaderPlan(options: HelmetOptions): HeaderPlan {
  const csp = options.contentSecurityPolicy;
  const directives =
    csp && typeof csp === 'object' ? Object.values(csp.directives ?? {}) : [];
  if (
    directives.some(
      (value) =>
        typeof value === 'function' ||
        (Array.isArray(value) &&
          value.some((entry) => typeof entry === 'function')),
    )
  )
    throw new Error(
      'A CSP directive computed per request cannot be planned once; use helmet() itself.',
    );
  const plan: HeaderPlan = { set: [], removed: [] };
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      plan.set.push([name, String(value)]);
    },
    removeHeader(name: string) {
      plan.removed.push(name);
    },
  };
  let outcome: { error?: unknown } | undefined;
  helmet(options)({} as Request, recorder as unknown as Response, (error) => {
    outcome = { error };
  });
  // Helmet's middlewares run synchronously; a plan from a chain that did not finish would drop headers.
  if (!outcome || outcome.error)
    throw new Error(
      `helmet did not finish on a recording response: ${String(outcome?.error ?? 'next() never called')}`,
    );
  return plan;
}

/** Express middleware applying helmet's headers for `options` from a plan made once (see helmetHeaderPlan). */
export function securityHeaders(options: HelmetOptions): RequestHandler {
  const { set, removed } = helmetHeaderPlan(options);
  return (_req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
