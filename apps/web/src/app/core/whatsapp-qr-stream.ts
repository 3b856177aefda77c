import { Injectable, inject } from '@angular/core';
import {
  WHATSAPP_LINK_PROBLEMS,
  type WhatsAppLinkProblem,
  type WhatsAppStatus,
} from '@metatronos/shared-types';
import { WHATSAPP_QR_STREAM_URL } from './api-client';
import { EVENT_SOURCE_FACTORY } from './event-stream';

/** What `GET /api/whatsapp/qr/stream` reports while a device is being linked. */
export interface WhatsAppQrStreamHandlers {
  /** A new QR code (a PNG data URL). */
  onQr: (qr: string) => void;
  /** Sent on connect and on every status change, with why the link is retrying or stopped. */
  onStatus: (
    status: WhatsAppStatus,
    phoneNumber: string | null,
    details: WhatsAppLinkDetails,
  ) => void;
  /** The link is up. */
  onConnected: (phoneNumber: string | null) => void;
  /** The browser gave up on the stream (e.g. the server refused it); it is closed. */
  onError?: (error: Error) => void;
}

/** Why the link is retrying or stopped (all null when it is fine, or from a server that does not say). */
export interface WhatsAppLinkDetails {
  reason: string | null;
  problem: WhatsAppLinkProblem | null;
  reconnectAt: string | null;
}

/** An open QR stream; `close()` ends it (also safe to call twice). */
export interface WhatsAppQrStreamHandle {
  close(): void;
}

/** EventSource.CLOSED */
const CLOSED = 2;

/**
 * The seed's `streamWhatsAppQR()`: opens the QR/status SSE stream with an EventSource (made by
 * `EVENT_SOURCE_FACTORY`, so tests can fake it). Network drops are retried by the browser; the server
 * sends the current status again on every reconnect.
 */
@Injectable({ providedIn: 'root' })
export class WhatsAppQrStream {
  private readonly createSource = inject(EVENT_SOURCE_FACTORY);

  open(handlers: WhatsAppQrStreamHandlers): WhatsAppQrStreamHandle {
    const source = this.createSource(WHATSAPP_QR_STREAM_URL);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      source.close();
    };
    const listen = (
      name: string,
      handle: (data: Record<string, unknown>) => void,
    ) =>
      source.addEventListener(name, (message) => {
        if (closed) return;
        const data = parseObject(message.data);
        if (data) handle(data);
      });

    listen('qr', (data) => {
      if (typeof data['qr'] === 'string') handlers.onQr(data['qr']);
    });
    listen('status', (data) => {
      if (isStatus(data['status']))
        handlers.onStatus(data['status'], phoneOf(data), detailsOf(data));
    });
    listen('connected', (data) => handlers.onConnected(phoneOf(data)));
    source.onerror = () => {
      if (closed || source.readyState !== CLOSED) return;
      close();
      handlers.onError?.(
        new Error('The WhatsApp linking stream was closed by the server.'),
      );
    };
    return { close };
  }
}

const STATUSES: readonly string[] = [
  'disconnected',
  'connecting',
  'qr_ready',
  'connected',
] satisfies WhatsAppStatus[];

function isStatus(value: unknown): value is WhatsAppStatus {
  return typeof value === 'string' && STATUSES.includes(value);
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}

function detailsOf(data: Record<string, unknown>): WhatsAppLinkDetails {
  const problem = data['problem'];
  return {
    reason: textOf(data['reason']),
    problem:
      typeof problem === 'string' &&
      (WHATSAPP_LINK_PROBLEMS as readonly string[]).includes(problem)
        ? (problem as WhatsAppLinkProblem)
        : null,
    reconnectAt: textOf(data['reconnectAt']),
  };
}

function phoneOf(data: Record<string, unknown>): string | null {
  return typeof data['phoneNumber'] === 'string' && data['phoneNumber']
    ? data['phoneNumber']
    : null;
}

function parseObject(raw: string): Record<string, unknown> | null {
  try {
    const data: unknown = JSON.parse(raw);
    return data !== null && typeof data === 'object'
      ? (data as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
