import type { CookieOptions, Request } from 'express';
import type { AppConfig } from '../config/app-config';

export const SESSION_COOKIE = 'metatron_session';

export function sessionTokenFrom(req: Request): string | undefined {
  const value: unknown = req.cookies?.[SESSION_COOKIE];
  return typeof value === 'string' && value ? value : undefined;
}

export function sessionCookieOptions(
  config: AppConfig,
  req: Request,
  expiresAt?: Date,
): CookieOptions {
  const secure =
    config.cookieSecure === 'always' ||
    (config.cookieSecure === 'auto' && req.secure);
  return {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    ...(expiresAt ? { expires: expiresAt } : {}),
  };
}
