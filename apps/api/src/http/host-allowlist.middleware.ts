import type { NextFunction, Request, Response } from 'express';

/** `[::1]:3000` → `::1`, `Localhost:3000` → `localhost`. */
export function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  return host.replace(/:\d+$/, '');
}

/**
 * Answers only to known host names, so a web page on another site cannot reach
 * this server through DNS rebinding (e.g. to run first-run setup). `null` = any.
 */
export function hostAllowlist(allowed: string[] | null) {
  const names = allowed ? new Set(allowed) : null;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!names || names.has(hostnameOf(req.headers.host))) {
      next();
      return;
    }
    res.status(421).json({
      statusCode: 421,
      message: `Host "${hostnameOf(req.headers.host)}" is not allowed. Add it to ALLOWED_HOSTS to serve MetatronOS under that name.`,
      error: 'Misdirected Request',
    });
  };
}
