import { HttpClient, type HttpEvent, HttpParams } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { Observable, map } from 'rxjs';
import type {
  AccountPreset,
  AccountTestResult,
  AccountView,
  AppSettingsView,
  AuthStatus,
  ChatListQuery,
  ChatMessage,
  ChatSummary,
  ConnectionTestRequest,
  ConnectionTestResponse,
  CollectionDocumentsPage,
  CollectionInfo,
  ChatPromptPreview,
  CombinedPromptResponse,
  DefaultInstructionResponse,
  CreateAccountRequest,
  CreateChatRequest,
  CreateCronJobRequest,
  CreateTelegramPermissionRequest,
  CreateWhatsAppPermissionRequest,
  CronJobView,
  CronPreview,
  CronRunView,
  EmailDraftView,
  ModelListResponse,
  PasswordRequest,
  PulseView,
  RenameChatRequest,
  SystemInfo,
  SystemInstruction,
  TelegramInboundMessage,
  TelegramPermission,
  TelegramStatusView,
  UpdateAccountRequest,
  UpdateAppSettingsRequest,
  UpdateChatRequest,
  UpdateCronJobRequest,
  UpdateEmailDraftRequest,
  UpdatePulseRequest,
  UpdateSystemInstructionRequest,
  UpdateTelegramPermissionRequest,
  UpdateWhatsAppPermissionRequest,
  UploadedAttachment,
  WebSearchTestRequest,
  WebSearchTestResponse,
  WhatsAppInboundMessage,
  WhatsAppPermission,
  WhatsAppStatusView,
  ToolsResponse,
  MemoryListResponse,
  MemoryNoteView,
  MemoryRunView,
  UpdateMemoryRequest,
} from '@metatronos/shared-types';

/** Base path of every REST route; the API serves the console from the same origin. */
export const API_BASE = '/api';

/** Paths under this prefix are the auth routes: they answer 401 themselves and never mean "session expired". */
export const AUTH_API_PREFIX = `${API_BASE}/auth/`;

/** One page of `GET /api/chats/:id/messages`: `limit` messages, or those before `before` (a message id). */
export interface MessagePageQuery {
  limit: number;
  before?: string;
}

/** One page of `GET /api/data/collections/:name/documents`. */
export interface DocumentPageQuery {
  limit: number;
  skip: number;
}

/** `/api/chats/<id>` with the id escaped. */
export function chatUrl(chatId: string): string {
  return `${API_BASE}/chats/${encodeURIComponent(chatId)}`;
}

/** `/api/cronjobs/<id>` with the id escaped. */
export function cronJobUrl(jobId: string): string {
  return `${API_BASE}/cronjobs/${encodeURIComponent(jobId)}`;
}

/** `/api/media/<id>`: a generated or edited image, served to the owner's session (also usable as `<img src>`). */
export function accountUrl(accountId: string): string {
  return `${API_BASE}/accounts/${encodeURIComponent(accountId)}`;
}

export function draftUrl(draftId: string): string {
  return `${API_BASE}/drafts/${encodeURIComponent(draftId)}`;
}

export function mediaUrl(mediaId: string): string {
  return `${API_BASE}/media/${encodeURIComponent(mediaId)}`;
}

/** `/api/whatsapp/permissions/<id>` with the id escaped. */
export function whatsAppPermissionUrl(permissionId: string): string {
  return `${API_BASE}/whatsapp/permissions/${encodeURIComponent(permissionId)}`;
}

/** The SSE stream of WhatsApp status and QR codes while linking (a GET, so an EventSource sends the session cookie). */
export const WHATSAPP_QR_STREAM_URL = `${API_BASE}/whatsapp/qr/stream`;

/** `POST /api/whatsapp/connect`: linking started, or the account is linked already. */
export type WhatsAppConnectResponse =
  | { status: 'connecting' }
  | { status: 'already_connected'; phoneNumber: string | null };

/** Typed access to the MetatronOS REST API. The session is an HttpOnly cookie, so nothing here handles tokens. */
@Injectable({ providedIn: 'root' })
export class ApiClient {
  private readonly http = inject(HttpClient);

  authStatus(): Observable<AuthStatus> {
    return this.http.get<AuthStatus>(`${API_BASE}/auth/status`);
  }

  setupOwner(password: string): Observable<void> {
    const body: PasswordRequest = { password };
    return this.http
      .post<unknown>(`${API_BASE}/auth/setup`, body)
      .pipe(map(() => undefined));
  }

  login(password: string): Observable<void> {
    const body: PasswordRequest = { password };
    return this.http
      .post<unknown>(`${API_BASE}/auth/login`, body)
      .pipe(map(() => undefined));
  }

  logout(): Observable<void> {
    return this.http
      .post<unknown>(`${API_BASE}/auth/logout`, null)
      .pipe(map(() => undefined));
  }

  systemInfo(): Observable<SystemInfo> {
    return this.http.get<SystemInfo>(`${API_BASE}/system`);
  }

  // Chats

  /** Pinned first, then the most recently active; `q` searches titles and message text, `archived` lists those instead. */
  chats(query: ChatListQuery = {}): Observable<ChatSummary[]> {
    let params = new HttpParams();
    if (query.q) params = params.set('q', query.q);
    if (query.archived) params = params.set('archived', 'true');
    return this.http.get<ChatSummary[]>(`${API_BASE}/chats`, { params });
  }

  /** Pin, archive, rename or pick the chat's model. */
  updateChat(chatId: string, body: UpdateChatRequest): Observable<ChatSummary> {
    return this.http.patch<ChatSummary>(chatUrl(chatId), body);
  }

  /** The models of the configured providers. */
  models(): Observable<ModelListResponse> {
    return this.http.get<ModelListResponse>(`${API_BASE}/settings/models`);
  }

  /** Tries a key or an endpoint without saving it. */
  testConnection(
    body: ConnectionTestRequest,
  ): Observable<ConnectionTestResponse> {
    return this.http.post<ConnectionTestResponse>(
      `${API_BASE}/settings/test`,
      body,
    );
  }

  createChat(body: CreateChatRequest = {}): Observable<ChatSummary> {
    return this.http.post<ChatSummary>(`${API_BASE}/chats`, body);
  }

  renameChat(chatId: string, title: string): Observable<ChatSummary> {
    const body: RenameChatRequest = { title };
    return this.http.patch<ChatSummary>(chatUrl(chatId), body);
  }

  /** The owner's mode switch (kept in the chat as an event). */
  setChatMode(chatId: string, mode: string): Observable<ChatSummary> {
    const body: UpdateChatRequest = { mode };
    return this.http.patch<ChatSummary>(chatUrl(chatId), body);
  }

  /** The modes and their tools (Tools page, mode chip). */
  tools(): Observable<ToolsResponse> {
    return this.http.get<ToolsResponse>(`${API_BASE}/tools`);
  }

  deleteChat(chatId: string): Observable<void> {
    return this.http
      .delete<unknown>(chatUrl(chatId))
      .pipe(map(() => undefined));
  }

  /** Oldest first. */
  chatMessages(
    chatId: string,
    query: MessagePageQuery,
  ): Observable<ChatMessage[]> {
    let params = new HttpParams().set('limit', query.limit);
    if (query.before) params = params.set('before', query.before);
    return this.http.get<ChatMessage[]>(`${chatUrl(chatId)}/messages`, {
      params,
    });
  }

  /** Shows version `n` (1-based) of a message; the answer is the newest page of the chat as now shown. */
  switchVersion(
    chatId: string,
    messageId: string,
    n: number,
  ): Observable<ChatMessage[]> {
    return this.http.post<ChatMessage[]>(
      `${chatUrl(chatId)}/messages/${encodeURIComponent(messageId)}/versions/${n}`,
      null,
    );
  }

  /** Cancels the reply running in the chat; its stream then ends with `done { stopped: true }`. */
  stopReply(chatId: string): Observable<void> {
    return this.http
      .post<unknown>(`${chatUrl(chatId)}/stop`, null)
      .pipe(map(() => undefined));
  }

  // Attachments

  /** Uploads one file (multipart field `file`); the events carry the upload progress, then the response. */
  uploadAttachment(file: File): Observable<HttpEvent<UploadedAttachment>> {
    const form = new FormData();
    form.append('file', file, file.name);
    return this.http.post<UploadedAttachment>(`${API_BASE}/attachments`, form, {
      reportProgress: true,
      observe: 'events',
    });
  }

  // System instruction

  systemInstruction(): Observable<SystemInstruction> {
    return this.http.get<SystemInstruction>(`${API_BASE}/system-instruction`);
  }

  updateSystemInstruction(
    body: UpdateSystemInstructionRequest,
  ): Observable<SystemInstruction> {
    return this.http.patch<SystemInstruction>(
      `${API_BASE}/system-instruction`,
      body,
    );
  }

  /** Exactly what the next chat turn would send as the system prompt. */
  combinedPrompt(): Observable<CombinedPromptResponse> {
    return this.http.get<CombinedPromptResponse>(
      `${API_BASE}/system-instruction/prompt`,
    );
  }

  /** The prompt one of the owner's chats sends next, with the mark its newest reply ended with. */
  chatPrompt(chatId: string): Observable<ChatPromptPreview> {
    return this.http.get<ChatPromptPreview>(
      `${API_BASE}/chats/${encodeURIComponent(chatId)}/prompt`,
    );
  }

  /** The core instruction a fresh install starts with, for "Reset to default". */
  defaultInstruction(): Observable<DefaultInstructionResponse> {
    return this.http.get<DefaultInstructionResponse>(
      `${API_BASE}/system-instruction/default`,
    );
  }

  // Settings

  settings(): Observable<AppSettingsView> {
    return this.http.get<AppSettingsView>(`${API_BASE}/settings`);
  }

  updateSettings(body: UpdateAppSettingsRequest): Observable<AppSettingsView> {
    return this.http.patch<AppSettingsView>(`${API_BASE}/settings`, body);
  }

  // Data

  collections(): Observable<CollectionInfo[]> {
    return this.http.get<CollectionInfo[]>(`${API_BASE}/data/collections`);
  }

  collectionDocuments(
    name: string,
    query: DocumentPageQuery,
  ): Observable<CollectionDocumentsPage> {
    const params = new HttpParams()
      .set('limit', query.limit)
      .set('skip', query.skip);
    return this.http.get<CollectionDocumentsPage>(
      `${API_BASE}/data/collections/${encodeURIComponent(name)}/documents`,
      {
        params,
      },
    );
  }

  // Scheduled jobs

  /** In creation order. */
  cronJobs(): Observable<CronJobView[]> {
    return this.http.get<CronJobView[]>(`${API_BASE}/cronjobs`);
  }

  cronJob(jobId: string): Observable<CronJobView> {
    return this.http.get<CronJobView>(cronJobUrl(jobId));
  }

  createCronJob(body: CreateCronJobRequest): Observable<CronJobView> {
    return this.http.post<CronJobView>(`${API_BASE}/cronjobs`, body);
  }

  updateCronJob(
    jobId: string,
    body: UpdateCronJobRequest,
  ): Observable<CronJobView> {
    return this.http.patch<CronJobView>(cronJobUrl(jobId), body);
  }

  /** Also deletes the job's chat. */
  deleteCronJob(jobId: string): Observable<void> {
    return this.http
      .delete<unknown>(cronJobUrl(jobId))
      .pipe(map(() => undefined));
  }

  /** Starts a run now (202, outcome `running`); 409 while the job is already running. */
  runCronJob(jobId: string): Observable<CronRunView> {
    return this.http.post<CronRunView>(`${cronJobUrl(jobId)}/run`, null);
  }

  /** Newest first. */
  cronJobRuns(jobId: string, limit: number): Observable<CronRunView[]> {
    return this.http.get<CronRunView[]>(`${cronJobUrl(jobId)}/runs`, {
      params: new HttpParams().set('limit', limit),
    });
  }

  /** What an expression means and when it would run, in the owner's time zone (200 with `valid: false` when it is refused). */
  cronPreview(cronExpression: string): Observable<CronPreview> {
    return this.http.get<CronPreview>(`${API_BASE}/cronjobs/preview`, {
      params: new HttpParams().set('cronExpression', cronExpression),
    });
  }

  // Pulse

  pulse(): Observable<PulseView> {
    return this.http.get<PulseView>(`${API_BASE}/pulse`);
  }

  updatePulse(body: UpdatePulseRequest): Observable<PulseView> {
    return this.http.patch<PulseView>(`${API_BASE}/pulse`, body);
  }

  /** Starts a pulse now (202); 409 while one runs. */
  runPulse(): Observable<CronRunView> {
    return this.http.post<CronRunView>(`${API_BASE}/pulse/run`, null);
  }

  /** Newest first. */
  pulseRuns(limit: number): Observable<CronRunView[]> {
    return this.http.get<CronRunView[]>(`${API_BASE}/pulse/runs`, {
      params: new HttpParams().set('limit', limit),
    });
  }

  // Web search

  /** One Brave search with the saved key: 200 with `ok: false` when Brave refused; 400 when no key is saved. */
  testWebSearch(
    body: WebSearchTestRequest = {},
  ): Observable<WebSearchTestResponse> {
    return this.http.post<WebSearchTestResponse>(
      `${API_BASE}/web-search/test`,
      body,
    );
  }

  // Telegram

  telegramStatus(): Observable<TelegramStatusView> {
    return this.http.get<TelegramStatusView>(`${API_BASE}/telegram/status`);
  }

  /** Newest first, strangers included. */
  telegramMessages(limit = 30): Observable<TelegramInboundMessage[]> {
    return this.http.get<TelegramInboundMessage[]>(
      `${API_BASE}/telegram/messages`,
      { params: { limit } },
    );
  }

  telegramPermissions(): Observable<TelegramPermission[]> {
    return this.http.get<TelegramPermission[]>(
      `${API_BASE}/telegram/permissions`,
    );
  }

  createTelegramPermission(
    body: CreateTelegramPermissionRequest,
  ): Observable<TelegramPermission> {
    return this.http.post<TelegramPermission>(
      `${API_BASE}/telegram/permissions`,
      body,
    );
  }

  updateTelegramPermission(
    permissionId: string,
    body: UpdateTelegramPermissionRequest,
  ): Observable<TelegramPermission> {
    return this.http.patch<TelegramPermission>(
      `${API_BASE}/telegram/permissions/${encodeURIComponent(permissionId)}`,
      body,
    );
  }

  deleteTelegramPermission(
    permissionId: string,
  ): Observable<{ success: true }> {
    return this.http.delete<{ success: true }>(
      `${API_BASE}/telegram/permissions/${encodeURIComponent(permissionId)}`,
    );
  }

  // WhatsApp

  whatsAppStatus(): Observable<WhatsAppStatusView> {
    return this.http.get<WhatsAppStatusView>(`${API_BASE}/whatsapp/status`);
  }

  /** Starts linking (fire-and-forget on the server); follow it on `WHATSAPP_QR_STREAM_URL`. */
  connectWhatsApp(): Observable<WhatsAppConnectResponse> {
    return this.http.post<WhatsAppConnectResponse>(
      `${API_BASE}/whatsapp/connect`,
      null,
    );
  }

  /** The current QR code as a PNG data URL; 404 when there is none. */
  whatsAppQr(): Observable<{ qr: string }> {
    return this.http.get<{ qr: string }>(`${API_BASE}/whatsapp/qr`);
  }

  /** `clearSession` also deletes the saved credentials: the next link needs a new QR scan. */
  disconnectWhatsApp(
    clearSession: boolean,
  ): Observable<{ status: 'disconnected' }> {
    return this.http.post<{ status: 'disconnected' }>(
      `${API_BASE}/whatsapp/disconnect`,
      { clearSession },
    );
  }

  /** Sorted by display name. */
  /** What people sent to the linked number, newest first, strangers included. */
  whatsAppInbound(limit = 30): Observable<WhatsAppInboundMessage[]> {
    return this.http.get<WhatsAppInboundMessage[]>(
      `${API_BASE}/whatsapp/inbound`,
      { params: { limit } },
    );
  }

  whatsAppPermissions(): Observable<WhatsAppPermission[]> {
    return this.http.get<WhatsAppPermission[]>(
      `${API_BASE}/whatsapp/permissions`,
    );
  }

  /** 400 when a field is missing or the number is invalid, 409 when the number has a permission already. */
  createWhatsAppPermission(
    body: CreateWhatsAppPermissionRequest,
  ): Observable<WhatsAppPermission> {
    return this.http.post<WhatsAppPermission>(
      `${API_BASE}/whatsapp/permissions`,
      body,
    );
  }

  updateWhatsAppPermission(
    permissionId: string,
    body: UpdateWhatsAppPermissionRequest,
  ): Observable<WhatsAppPermission> {
    return this.http.patch<WhatsAppPermission>(
      whatsAppPermissionUrl(permissionId),
      body,
    );
  }

  /** Lifts the bot-loop guard's pause on a contact's auto-replies. */
  resumeWhatsAppAutoReply(
    permissionId: string,
  ): Observable<WhatsAppPermission> {
    return this.http.post<WhatsAppPermission>(
      `${whatsAppPermissionUrl(permissionId)}/resume-auto-reply`,
      {},
    );
  }

  deleteWhatsAppPermission(permissionId: string): Observable<void> {
    return this.http
      .delete<unknown>(whatsAppPermissionUrl(permissionId))
      .pipe(map(() => undefined));
  }

  /** Email and calendar accounts; passwords come back as PASSWORD_MASK. */
  accounts(): Observable<AccountView[]> {
    return this.http.get<AccountView[]>(`${API_BASE}/accounts`);
  }

  accountPresets(): Observable<AccountPreset[]> {
    return this.http.get<AccountPreset[]>(`${API_BASE}/accounts/presets`);
  }

  /** Tests the connection first: 400 naming the problem, nothing stored. */
  createAccount(body: CreateAccountRequest): Observable<AccountView> {
    return this.http.post<AccountView>(`${API_BASE}/accounts`, body);
  }

  /** Tests a connection that is not stored (400 naming the problem). */
  testNewAccount(body: CreateAccountRequest): Observable<AccountTestResult> {
    return this.http.post<AccountTestResult>(`${API_BASE}/accounts/test`, body);
  }

  testAccount(accountId: string): Observable<AccountTestResult> {
    return this.http.post<AccountTestResult>(
      `${accountUrl(accountId)}/test`,
      null,
    );
  }

  /** An omitted or masked password keeps the stored one; connection changes are tested first. */
  updateAccount(
    accountId: string,
    body: UpdateAccountRequest,
  ): Observable<AccountView> {
    return this.http.patch<AccountView>(accountUrl(accountId), body);
  }

  deleteAccount(accountId: string): Observable<void> {
    return this.http
      .delete<unknown>(accountUrl(accountId))
      .pipe(map(() => undefined));
  }

  /** The drafts the AI wrote in unattended turns, waiting for the owner. */
  pendingDrafts(): Observable<EmailDraftView[]> {
    return this.http.get<EmailDraftView[]>(`${API_BASE}/drafts`, {
      params: { status: 'pending' },
    });
  }

  /** Drafts whose last send failed (they keep their error and can be sent again). */
  failedDrafts(): Observable<EmailDraftView[]> {
    return this.http.get<EmailDraftView[]>(`${API_BASE}/drafts`, {
      params: { status: 'failed' },
    });
  }

  updateDraft(
    draftId: string,
    body: UpdateEmailDraftRequest,
  ): Observable<EmailDraftView> {
    return this.http.patch<EmailDraftView>(draftUrl(draftId), body);
  }

  /** 400/409/502 with the reason when the message could not be sent. */
  sendDraft(draftId: string): Observable<EmailDraftView> {
    return this.http.post<EmailDraftView>(`${draftUrl(draftId)}/send`, null);
  }

  deleteDraft(draftId: string): Observable<void> {
    return this.http
      .delete<unknown>(draftUrl(draftId))
      .pipe(map(() => undefined));
  }

  /** The memory notes (newest first); with `q`, also what memory search finds. */
  memories(q?: string, limit?: number): Observable<MemoryListResponse> {
    let params = new HttpParams();
    if (q !== undefined) params = params.set('q', q);
    if (limit !== undefined) params = params.set('limit', String(limit));
    return this.http.get<MemoryListResponse>(`${API_BASE}/memories`, {
      params,
    });
  }

  updateMemory(
    id: string,
    body: UpdateMemoryRequest,
  ): Observable<MemoryNoteView> {
    return this.http.patch<MemoryNoteView>(
      `${API_BASE}/memories/${encodeURIComponent(id)}`,
      body,
    );
  }

  deleteMemory(id: string): Observable<void> {
    return this.http
      .delete<unknown>(`${API_BASE}/memories/${encodeURIComponent(id)}`)
      .pipe(map(() => undefined));
  }

  /** A proposal becomes a note. */
  approveMemory(id: string): Observable<MemoryNoteView> {
    return this.http.post<MemoryNoteView>(
      `${API_BASE}/memories/${encodeURIComponent(id)}/approve`,
      {},
    );
  }

  /** A proposal is dropped, never remembered. */
  discardMemory(id: string): Observable<void> {
    return this.http
      .post<unknown>(
        `${API_BASE}/memories/${encodeURIComponent(id)}/discard`,
        {},
      )
      .pipe(map(() => undefined));
  }

  /** Runs the nightly consolidation now (409 while one runs). */
  consolidateMemories(): Observable<MemoryRunView> {
    return this.http.post<MemoryRunView>(
      `${API_BASE}/memories/consolidate`,
      {},
    );
  }
}
