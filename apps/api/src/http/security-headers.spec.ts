import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import {
  HELMET_OPTIONS,
  helmetHeaderPlan,
  securityHeaders,
} from './security-headers';

/** A response that keeps its headers as a plain map, as Node's does (names case-insensitive). */
function recordingResponse(initial: Record<string, string> = {}) {
  const headers = new Map<string, string>(
    Object.entries(initial).map(([k, v]) => [k.toLowerCase(), v]),
  );
  const res = {
    setHeader(name: string, value: unknown) {
      headers.set(name.toLowerCase(), String(value));
    },
    removeHeader(name: string) {
      headers.delete(name.toLowerCase());
    },
  };
  return { headers, res: res as unknown as Response };
}

function run(
  middleware: (req: Request, res: Response, next: NextFunction) => void,
  initial?: Record<string, string>,
) {
  const { headers, res } = recordingResponse(initial);
  const next = jest.fn();
  middleware({} as Request, res, next);
  expect(next).toHaveBeenCalledWith();
  return Object.fromEntries(headers);
}

describe('security headers planned once from helmet', () => {
  it("sets exactly helmet's headers for the app's options, X-Powered-By removed", () => {
    const powered = { 'X-Powered-By': 'Express' };
    const expected = run(helmet(HELMET_OPTIONS), powered);
    expect(run(securityHeaders(HELMET_OPTIONS), powered)).toEqual(expected);
    expect(expected['content-security-policy']).toContain(
      "style-src 'self' 'unsafe-inline'",
    );
    expect(expected['strict-transport-security']).toBeUndefined();
    expect(expected['x-powered-by']).toBeUndefined();
    expect(Object.keys(expected).length).toBeGreaterThan(8);
  });

  it('gives every response the same headers, in the same order as helmet sets them', () => {
    const plan = helmetHeaderPlan(HELMET_OPTIONS);
    const middleware = securityHeaders(HELMET_OPTIONS);
    const first = run(middleware);
    expect(run(middleware)).toEqual(first);
    expect(plan.set.map(([name]) => name.toLowerCase())).toEqual(
      Object.keys(first),
    );
  });

  it('refuses options whose CSP is computed per request (a nonce), which one plan cannot hold', () => {
    expect(() =>
      helmetHeaderPlan({
        contentSecurityPolicy: {
          directives: {
            'script-src': ["'self'", () => "'nonce-abc'"],
          },
        },
      }),
    ).toThrow(/per request/);
  });
});
