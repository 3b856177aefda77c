import { HttpClient, HttpParams } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { type Observable, map } from 'rxjs';
import type {
  ActionsQuery,
  ApproveActionResponse,
  EditActionRequest,
  PendingActionView,
} from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';

export function actionUrl(actionId: string): string {
  return `${API_BASE}/actions/${encodeURIComponent(actionId)}`;
}

/** The pending actions' routes (`/api/actions`): tool calls that wait for the owner's approval. */
@Injectable({ providedIn: 'root' })
export class ActionsApi {
  private readonly http = inject(HttpClient);

  list(query: ActionsQuery = {}): Observable<PendingActionView[]> {
    let params = new HttpParams();
    if (query.status) params = params.set('status', query.status);
    if (query.chatId) params = params.set('chatId', query.chatId);
    if (query.limit) params = params.set('limit', query.limit);
    return this.http.get<PendingActionView[]>(`${API_BASE}/actions`, {
      params,
    });
  }

  /** The actions waiting for the owner, newest first (a server that ignores the filter still yields pending ones only). */
  pending(chatId?: string): Observable<PendingActionView[]> {
    return this.list({ status: 'pending', chatId }).pipe(
      map((actions) =>
        actions.filter(
          (action) =>
            action.status === 'pending' &&
            (!chatId || action.chatId === chatId),
        ),
      ),
    );
  }

  /** The tool's schema checks the new arguments: 400 naming the problem, nothing changed. */
  edit(
    actionId: string,
    body: EditActionRequest,
  ): Observable<PendingActionView> {
    return this.http.patch<PendingActionView>(actionUrl(actionId), body);
  }

  /** Runs exactly the stored call once: 409 when it was approved, discarded or expired already, 404 unknown. */
  approve(actionId: string): Observable<ApproveActionResponse> {
    return this.http.post<ApproveActionResponse>(
      `${actionUrl(actionId)}/approve`,
      null,
    );
  }

  discard(actionId: string): Observable<void> {
    return this.http
      .post<unknown>(`${actionUrl(actionId)}/discard`, null)
      .pipe(map(() => undefined));
  }
}
