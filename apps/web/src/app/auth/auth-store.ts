import { HttpErrorResponse } from '@angular/common/http';
import { Injectable, computed, inject, signal } from '@angular/core';
import {
  Observable,
  catchError,
  finalize,
  of,
  shareReplay,
  tap,
  throwError,
} from 'rxjs';
import type { AuthStatus } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';

/** Where the console belongs for a given auth status. */
export type AuthDestination = 'setup' | 'login' | 'app';

export function destinationFor(status: AuthStatus): AuthDestination {
  if (!status.ownerExists) return 'setup';
  return status.authenticated ? 'app' : 'login';
}

/**
 * The console's view of `GET /api/auth/status`, kept in a signal. The session itself is an HttpOnly
 * cookie; this store only remembers what the server last said and updates it after setup, login and logout.
 */
@Injectable({ providedIn: 'root' })
export class AuthStore {
  private readonly api = inject(ApiClient);
  private readonly state = signal<AuthStatus | null>(null);
  private pending: Observable<AuthStatus> | null = null;

  /** Null until the server has been asked once. */
  readonly status = this.state.asReadonly();
  readonly ownerExists = computed(() => this.state()?.ownerExists ?? false);
  readonly authenticated = computed(() => this.state()?.authenticated ?? false);

  /** The known status, asking the server only the first time (or always with `refresh`). Concurrent calls share one request. */
  ensureStatus(refresh = false): Observable<AuthStatus> {
    const known = this.state();
    if (known && !refresh) return of(known);
    if (!this.pending) {
      this.pending = this.api.authStatus().pipe(
        tap((status) => this.state.set(status)),
        finalize(() => (this.pending = null)),
        shareReplay({ bufferSize: 1, refCount: false }),
      );
    }
    return this.pending;
  }

  /** First run: sets the owner password; the server logs this browser in. */
  setupOwner(password: string): Observable<void> {
    return this.api.setupOwner(password).pipe(
      tap(() => this.state.set({ ownerExists: true, authenticated: true })),
      catchError((error: unknown) => {
        // 409: somebody finished the setup first; the console must go to the login instead.
        if (error instanceof HttpErrorResponse && error.status === 409)
          this.state.set({ ownerExists: true, authenticated: false });
        return throwError(() => error);
      }),
    );
  }

  login(password: string): Observable<void> {
    return this.api.login(password).pipe(
      tap(() => this.state.set({ ownerExists: true, authenticated: true })),
      catchError((error: unknown) => {
        // 409: no owner exists yet (e.g. the data directory was reset).
        if (error instanceof HttpErrorResponse && error.status === 409)
          this.state.set({ ownerExists: false, authenticated: false });
        return throwError(() => error);
      }),
    );
  }

  /** Ends the session on the server. A 401 means it was already gone, which is just as good. */
  logout(): Observable<void> {
    return this.api.logout().pipe(
      catchError((error: unknown) =>
        error instanceof HttpErrorResponse && error.status === 401
          ? of(undefined)
          : throwError(() => error),
      ),
      tap(() => this.markLoggedOut()),
    );
  }

  /** The session is gone (logout elsewhere, expiry): an owner exists but this browser is not logged in. */
  markLoggedOut(): void {
    this.state.set({ ownerExists: true, authenticated: false });
  }
}
