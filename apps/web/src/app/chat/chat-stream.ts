import { HttpErrorResponse } from '@angular/common/http';
import { Injectable, InjectionToken, inject } from '@angular/core';
import { Router } from '@angular/router';
import { Observable } from 'rxjs';
import {
  CHAT_STREAM_EVENT_NAMES,
  type ChatStreamEventMap,
  type ChatStreamEventName,
  type RegenerateReplyRequest,
  type SendMessageRequest,
  describeApiError,
} from '@metatronos/shared-types';
import { AuthStore } from '../auth/auth-store';
import { loginQueryParams } from '../auth/return-url';
import { API_BASE, chatUrl } from '../core/api-client';
import { connectivityProblemFrom } from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { readSseStream } from './sse-parser';

/** The id of the chat the console holds before its first message: `/chat/new`. */
export const DRAFT_CHAT_ID = 'new';

/** One event of a reply stream, discriminated by its SSE name. */
export type ChatStreamEvent = {
  [K in ChatStreamEventName]: { type: K; data: ChatStreamEventMap[K] };
}[ChatStreamEventName];

/** `fetch`, injectable so tests can answer without a network. */
export const FETCH = new InjectionToken<typeof fetch>('FETCH', {
  providedIn: 'root',
  factory: () => (input, init) => fetch(input, init),
});

/** The server refused the message before any reply started (e.g. 400 "No model configured", 409 busy). */
export class ChatSendError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ChatSendError';
  }
}

/** The connection broke or the body could not be read once the reply had started. */
export class ChatStreamBrokenError extends Error {
  constructor(override readonly cause: unknown) {
    super('The connection to the server was lost before the reply finished.');
    this.name = 'ChatStreamBrokenError';
  }
}

const KNOWN_EVENTS = new Set<string>(CHAT_STREAM_EVENT_NAMES);

/**
 * Sends a chat message and streams the reply: `POST /api/chats/:id/messages` answers `text/event-stream`,
 * which EventSource cannot do (it only GETs), so this reads the body with `fetch` and an SSE parser.
 */
@Injectable({ providedIn: 'root' })
export class ChatStream {
  private readonly fetch = inject(FETCH);
  private readonly auth = inject(AuthStore);
  private readonly router = inject(Router);
  private readonly server = inject(ServerStatus);

  /**
   * The reply's events; completes when the server ends the stream. Errors with {@link ChatSendError} when the
   * server refused the message, {@link ChatStreamBrokenError} when the connection failed. Unsubscribing
   * aborts the request (the server keeps the reply running; `POST …/stop` ends it).
   */
  send(chatId: string, body: SendMessageRequest): Observable<ChatStreamEvent> {
    // A draft chat is stored by the server with its first message.
    const url =
      chatId === DRAFT_CHAT_ID
        ? `${API_BASE}/chats/messages`
        : `${chatUrl(chatId)}/messages`;
    return this.stream(url, body);
  }

  /**
   * Retry, Regenerate or Edit and resend (`content`): a new reply to the user message that the chat's latest
   * reply `messageId` answers, replacing that reply. Same events and errors as {@link send}.
   */
  regenerate(
    chatId: string,
    messageId: string,
    body: RegenerateReplyRequest = {},
  ): Observable<ChatStreamEvent> {
    return this.stream(
      `${chatUrl(chatId)}/messages/${encodeURIComponent(messageId)}/regenerate`,
      body,
    );
  }

  private stream(url: string, body: object): Observable<ChatStreamEvent> {
    return new Observable<ChatStreamEvent>((subscriber) => {
      const abort = new AbortController();
      let finished = false;

      const run = async (): Promise<void> => {
        let response: Response;
        try {
          response = await this.fetch(url, {
            method: 'POST',
            credentials: 'same-origin',
            headers: {
              Accept: 'text/event-stream',
              'Content-Type': 'application/json',
            },
            body: JSON.stringify(body),
            signal: abort.signal,
          });
        } catch {
          if (abort.signal.aborted) return;
          this.reportStatus(0, null);
          throw new ChatSendError(
            0,
            "Can't reach the MetatronOS server. Check that it is running, then try again.",
          );
        }

        if (!response.ok || !response.body) {
          const errorBody = await response.json().catch(() => null);
          this.reportStatus(response.status, errorBody);
          throw new ChatSendError(
            response.status,
            describeApiError(
              errorBody,
              `Sending failed: the server answered ${response.status}.`,
            ),
          );
        }
        this.server.markReachable();

        try {
          for await (const message of readSseStream(response.body)) {
            if (abort.signal.aborted) return;
            if (!KNOWN_EVENTS.has(message.event)) continue;
            const data = parseJson(message.data);
            if (data === null) continue;
            subscriber.next({ type: message.event, data } as ChatStreamEvent);
          }
        } catch (error) {
          if (abort.signal.aborted) return;
          throw new ChatStreamBrokenError(error);
        }
      };

      run().then(
        () => {
          finished = true;
          subscriber.complete();
        },
        (error: unknown) => {
          finished = true;
          if (!abort.signal.aborted) subscriber.error(error);
        },
      );

      return () => {
        if (!finished) abort.abort();
      };
    });
  }

  /** What the HTTP interceptor does for HttpClient requests: 401 → login, outages → the app-wide banner. */
  private reportStatus(status: number, body: unknown): void {
    if (status === 401) {
      this.auth.markLoggedOut();
      void this.router.navigate(['/login'], {
        queryParams: loginQueryParams(this.router.url),
      });
      return;
    }
    const problem = connectivityProblemFrom(
      new HttpErrorResponse({ status, error: body }),
    );
    if (problem) this.server.report(problem);
  }
}

function parseJson(raw: string): object | null {
  try {
    const data: unknown = JSON.parse(raw);
    return data !== null && typeof data === 'object' ? data : null;
  } catch {
    return null;
  }
}
