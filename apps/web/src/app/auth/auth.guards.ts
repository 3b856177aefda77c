import { inject } from '@angular/core';
import {
  type CanActivateChildFn,
  type CanActivateFn,
  Router,
  type UrlTree,
} from '@angular/router';
import { type Observable, catchError, map, of } from 'rxjs';
import type { AuthStatus } from '@metatronos/shared-types';
import { serverProblemFrom } from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { AuthStore, destinationFor } from './auth-store';
import { HOME_URL, loginQueryParams, safeReturnUrl } from './return-url';

type Decision = boolean | UrlTree;

/**
 * Runs `decide` on the (cached) auth status. When the server cannot be asked, the navigation is held and the
 * root component shows the full-page error whose Retry resumes it.
 */
function withAuthStatus(
  url: string,
  decide: (status: AuthStatus, router: Router) => Decision,
): Observable<Decision> {
  const router = inject(Router);
  const server = inject(ServerStatus);
  return inject(AuthStore)
    .ensureStatus()
    .pipe(
      map((status) => decide(status, router)),
      catchError((error: unknown) => {
        server.blockNavigation(url, serverProblemFrom(error));
        return of(false);
      }),
    );
}

function loginTree(router: Router, returnUrl: string): UrlTree {
  return router.createUrlTree(['/login'], {
    queryParams: loginQueryParams(returnUrl),
  });
}

/** The shell and its pages: only for the logged-in owner. */
export const ownerSessionGuard: CanActivateFn = (_route, state) =>
  withAuthStatus(state.url, (status, router) => {
    switch (destinationFor(status)) {
      case 'setup':
        return router.createUrlTree(['/setup']);
      case 'login':
        return loginTree(router, state.url);
      case 'app':
        return true;
    }
  });

export const ownerSessionChildGuard: CanActivateChildFn = (childRoute, state) =>
  ownerSessionGuard(childRoute, state);

/** `/login`: only while an owner exists and this browser is logged out. */
export const loginPageGuard: CanActivateFn = (route, state) =>
  withAuthStatus(state.url, (status, router) => {
    switch (destinationFor(status)) {
      case 'setup':
        return router.createUrlTree(['/setup']);
      case 'login':
        return true;
      case 'app':
        return router.parseUrl(
          safeReturnUrl(route.queryParamMap.get('returnUrl')),
        );
    }
  });

/** `/setup`: only before the owner password exists. */
export const setupPageGuard: CanActivateFn = (_route, state) =>
  withAuthStatus(state.url, (status, router) => {
    switch (destinationFor(status)) {
      case 'setup':
        return true;
      case 'login':
        return router.createUrlTree(['/login']);
      case 'app':
        return router.parseUrl(HOME_URL);
    }
  });
