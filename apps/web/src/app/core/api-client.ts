import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { Observable, map } from 'rxjs';
import type { AuthStatus, PasswordRequest, SystemInfo } from '@metatronos/shared-types';

/** Base path of every REST route; the API serves the console from the same origin. */
export const API_BASE = '/api';

/** Paths under this prefix are the auth routes: they answer 401 themselves and never mean "session expired". */
export const AUTH_API_PREFIX = `${API_BASE}/auth/`;

/** Typed access to the MetatronOS REST API. The session is an HttpOnly cookie, so nothing here handles tokens. */
@Injectable({ providedIn: 'root' })
export class ApiClient {
  private readonly http = inject(HttpClient);

  authStatus(): Observable<AuthStatus> {
    return this.http.get<AuthStatus>(`${API_BASE}/auth/status`);
  }

  setupOwner(password: string): Observable<void> {
    const body: PasswordRequest = { password };
    return this.http.post<unknown>(`${API_BASE}/auth/setup`, body).pipe(map(() => undefined));
  }

  login(password: string): Observable<void> {
    const body: PasswordRequest = { password };
    return this.http.post<unknown>(`${API_BASE}/auth/login`, body).pipe(map(() => undefined));
  }

  logout(): Observable<void> {
    return this.http.post<unknown>(`${API_BASE}/auth/logout`, null).pipe(map(() => undefined));
  }

  systemInfo(): Observable<SystemInfo> {
    return this.http.get<SystemInfo>(`${API_BASE}/system`);
  }
}
