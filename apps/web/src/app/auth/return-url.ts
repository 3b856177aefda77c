/** Where the console goes after login when no other page was requested. */
export const HOME_URL = '/chat';

const AUTH_PAGES = ['/login', '/setup'];

/**
 * A safe in-app URL to return to after login: only absolute paths of this app, never another origin
 * (`//host`, `/\host`) and never the auth pages themselves.
 */
export function safeReturnUrl(candidate: string | null | undefined): string {
  if (
    !candidate ||
    !candidate.startsWith('/') ||
    candidate.startsWith('//') ||
    candidate.startsWith('/\\')
  )
    return HOME_URL;
  const path = candidate.split(/[?#]/)[0];
  if (path === '/' || AUTH_PAGES.includes(path)) return HOME_URL;
  return candidate;
}

/** Query params for `/login` that bring the owner back to `url` afterwards (none when that is the home page anyway). */
export function loginQueryParams(url: string): { returnUrl?: string } {
  const target = safeReturnUrl(url);
  return target === HOME_URL ? {} : { returnUrl: target };
}
