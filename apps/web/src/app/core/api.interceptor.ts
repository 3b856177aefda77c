import {
  HttpErrorResponse,
  type HttpInterceptorFn,
  HttpResponse,
} from '@angular/common/http';
import { inject } from '@angular/core';
import { Router } from '@angular/router';
import { tap } from 'rxjs';
import { AuthStore } from '../auth/auth-store';
import { loginQueryParams } from '../auth/return-url';
import { API_BASE, AUTH_API_PREFIX } from './api-client';
import { connectivityProblemFrom } from './server-problem';
import { ServerStatus } from './server-status';

/**
 * Cross-cutting handling of API responses:
 * - 401 from any non-auth route: the session is gone; forget it and go to the login, returning here afterwards.
 * - status 0 / 502 / 503 / 504: report "can't reach the server" / "database unavailable" to {@link ServerStatus}.
 *   Form posts to the auth routes show such errors inline instead; the status check does report them.
 * The error is always re-thrown so the caller can show its own state.
 */
export const apiInterceptor: HttpInterceptorFn = (req, next) => {
  if (!req.url.startsWith(API_BASE)) return next(req);
  const auth = inject(AuthStore);
  const router = inject(Router);
  const server = inject(ServerStatus);
  const isAuthRoute = req.url.startsWith(AUTH_API_PREFIX);
  const isAuthForm = isAuthRoute && req.method !== 'GET';

  return next(req).pipe(
    tap({
      next: (event) => {
        if (event instanceof HttpResponse) server.markReachable();
      },
      error: (error: unknown) => {
        if (!(error instanceof HttpErrorResponse)) return;
        if (error.status === 401 && !isAuthRoute) {
          auth.markLoggedOut();
          void router.navigate(['/login'], {
            queryParams: loginQueryParams(router.url),
          });
          return;
        }
        const problem = connectivityProblemFrom(error);
        if (problem && !isAuthForm) server.report(problem);
      },
    }),
  );
};
