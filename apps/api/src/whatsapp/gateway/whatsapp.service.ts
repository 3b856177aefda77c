import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  WHATSAPP_MESSAGES_MAX_LIMIT,
  type BufferedMessage,
  type WhatsAppLinkProblem,
  type WhatsAppStatus,
  type WhatsAppStatusView,
} from '@metatronos/shared-types';
import { Clock } from '../../clock/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { AppEventBus } from '../../events/app-event-bus';
import { WhatsAppGateway, phoneDigits } from './whatsapp-gateway';
import {
  isGroupJid,
  normaliseMessage,
  toJid,
} from './whatsapp-message-normaliser';
import { WhatsAppMessageStore } from './whatsapp-message.store';
import {
  WhatsAppDisconnectCode,
  WhatsAppSocketFactory,
  type WhatsAppConnectionUpdate,
  type WhatsAppMessagesUpsert,
  type WhatsAppSocket,
} from './whatsapp-socket';

export const WHATSAPP_AUTH_DIR_NAME = 'whatsapp-auth';
export const RECONNECT_BASE_MS = 2_000;
export const RECONNECT_MAX_MS = 5 * 60_000;
/** A connection that stayed open this long starts the backoff from scratch when it drops. */
export const RECONNECT_STABLE_MS = 60_000;
/** Each delay is the nominal one times a factor in [1 - JITTER, 1 + JITTER] (still capped). */
export const RECONNECT_JITTER = 0.2;
export const QR_SIZE_PX = 256;

export const NOT_CONNECTED_MESSAGE = 'WhatsApp is not connected';
export const LOGGED_OUT_REASON =
  'WhatsApp logged this device out. Connect again and scan a new QR code.';
export const FORBIDDEN_REASON =
  'WhatsApp refused this account (forbidden). Check the phone before connecting again.';

/** Nominal delay before reconnect attempt `attempt` (0-based): 2 s doubling, capped at 5 min, with jitter. */
export function reconnectDelayMs(
  attempt: number,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(
    RECONNECT_MAX_MS,
    RECONNECT_BASE_MS * 2 ** Math.min(attempt, 30),
  );
  const factor = 1 - RECONNECT_JITTER + 2 * RECONNECT_JITTER * random();
  return Math.round(Math.min(RECONNECT_MAX_MS, nominal * factor));
}

/** What a close code means for the owner (the console words it); codes that stop the link are handled apart. */
function problemOfCode(code: number | undefined): WhatsAppLinkProblem {
  switch (code) {
    case WhatsAppDisconnectCode.connectionLost:
      return 'connection_lost';
    case WhatsAppDisconnectCode.connectionClosed:
      return 'connection_closed';
    case WhatsAppDisconnectCode.connectionReplaced:
      return 'connection_replaced';
    case WhatsAppDisconnectCode.badSession:
      return 'bad_session';
    case WhatsAppDisconnectCode.multideviceMismatch:
      return 'multidevice_mismatch';
    case WhatsAppDisconnectCode.unavailableService:
      return 'service_unavailable';
    default:
      return 'closed';
  }
}

function disconnectCode(update: WhatsAppConnectionUpdate): number | undefined {
  return update.lastDisconnect?.error?.output?.statusCode;
}

/**
 * The one WhatsApp link of the process: the seed's status lifecycle
 * (disconnected → connecting → qr_ready → connected), QR codes as PNG data
 * URLs, reconnects with backoff, and every received message stored in
 * `whatsapp_messages` before `whatsapp.message` announces it.
 */
@Injectable()
export class WhatsAppService
  extends WhatsAppGateway
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private readonly logger = new Logger('WhatsApp');
  private currentStatus: WhatsAppStatus = 'disconnected';
  private currentPhone: string | null = null;
  private currentReason: string | null = null;
  private currentProblem: WhatsAppLinkProblem | null = null;
  private currentQr: string | null = null;
  private socket: WhatsAppSocket | null = null;
  private detachSocket: (() => void) | null = null;
  /** Bumped whenever the owner (or a close) abandons the socket being opened. */
  private generation = 0;
  /** Counted failed attempts since the last stable connection (515 is not counted). */
  private attempts = 0;
  private connectedAt: number | null = null;
  private nextReconnectAt: Date | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private inbox: Promise<void> = Promise.resolve();
  private closing = false;
  /** Source of the jitter (replaceable in tests). */
  random: () => number = Math.random;

  constructor(
    private readonly factory: WhatsAppSocketFactory,
    private readonly store: WhatsAppMessageStore,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  get status(): WhatsAppStatus {
    return this.currentStatus;
  }

  get phoneNumber(): string | null {
    return this.currentPhone;
  }

  get qrDataUrl(): string | null {
    return this.currentQr;
  }

  get reason(): string | null {
    return this.currentReason;
  }

  get problem(): WhatsAppLinkProblem | null {
    return this.currentProblem;
  }

  get reconnectAt(): Date | null {
    return this.nextReconnectAt;
  }

  get authDir(): string {
    return join(this.config.dataDir, WHATSAPP_AUTH_DIR_NAME);
  }

  view(): WhatsAppStatusView {
    return {
      status: this.currentStatus,
      phoneNumber: this.currentPhone,
      reason: this.currentReason,
      problem: this.currentProblem,
      reconnectAt: this.nextReconnectAt?.toISOString() ?? null,
    };
  }

  /** A saved session reconnects at boot, without a new scan. */
  onApplicationBootstrap(): void {
    if (this.hasSavedSession()) this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.generation++;
    this.clearReconnect();
    const socket = this.releaseSocket();
    // Ending (not logging out) keeps the session for the next start.
    socket?.end(undefined);
    await this.inbox;
  }

  hasSavedSession(): boolean {
    return existsSync(join(this.authDir, 'creds.json'));
  }

  /** Starts connecting unless already connected or on the way (fire-and-forget). */
  connect():
    | { status: 'already_connected'; phoneNumber: string | null }
    | { status: 'connecting' } {
    if (this.currentStatus === 'connected')
      return { status: 'already_connected', phoneNumber: this.currentPhone };
    if (this.socket || this.currentStatus !== 'disconnected') {
      // Backing off: the owner asked, so try now.
      if (this.nextReconnectAt && !this.socket) this.reconnectNow();
      return { status: 'connecting' };
    }
    this.attempts = 0;
    this.setState({ status: 'connecting', reason: null, problem: null });
    void this.openSocket();
    return { status: 'connecting' };
  }

  /** Closes the link; with `clearSession` logs the device out and deletes the saved session. */
  async disconnect(clearSession = false): Promise<void> {
    this.generation++;
    this.clearReconnect();
    this.attempts = 0;
    const socket = this.releaseSocket();
    if (clearSession) {
      if (socket)
        await socket
          .logout()
          .catch((error: unknown) =>
            this.logger.warn(`Logout failed: ${(error as Error).message}`),
          );
      await rm(this.authDir, { recursive: true, force: true });
    } else {
      socket?.end(undefined);
    }
    this.currentQr = null;
    this.setState({
      status: 'disconnected',
      phoneNumber: null,
      reason: null,
      problem: null,
    });
  }

  async sendText(
    phoneOrJid: string,
    text: string,
    options: { storeInBackground?: boolean } = {},
  ): Promise<{ success: true; jid: string; stored?: Promise<void> }> {
    const socket = this.socket;
    if (this.currentStatus !== 'connected' || !socket)
      throw new Error(NOT_CONNECTED_MESSAGE);
    if (!phoneOrJid.includes('@') && !phoneDigits(phoneOrJid))
      throw new Error('Invalid phone number');
    const jid = toJid(phoneOrJid);
    let sent;
    try {
      sent = await socket.sendMessage(jid, { text });
    } catch (error) {
      throw new Error(
        `WhatsApp could not send the message: ${(error as Error).message}`,
      );
    }
    const stored = this.storeOwnMessage(socket, sent?.key?.id, jid, text);
    if (options.storeInBackground) return { success: true, jid, stored };
    await stored;
    return { success: true, jid };
  }

  /**
   * Keeps what the linked account sent next to what it received, so reading a
   * contact's messages shows both sides. (Baileys reports its own sends as an
   * `append` upsert, which is not taken.) A failure here does not undo the send.
   */
  private async storeOwnMessage(
    socket: WhatsAppSocket,
    id: string | null | undefined,
    jid: string,
    body: string,
  ): Promise<void> {
    if (!id) return;
    const now = this.clock.now();
    const message: BufferedMessage = {
      id,
      from: this.ownJid(socket),
      fromName: null,
      to: jid,
      body,
      timestamp: now.getTime(),
      fromMe: true,
      isGroup: isGroupJid(jid),
    };
    try {
      // With many contacts answered at once, their replies share one insert.
      await this.store.addSoon({
        message,
        phone: phoneDigits(jid),
        receivedAt: now,
        processing: 'skipped',
      });
    } catch (error) {
      this.logger.warn(
        `Sent WhatsApp message ${id} could not be stored: ${(error as Error).message}`,
      );
    }
  }

  private ownJid(socket: WhatsAppSocket): string {
    return `${this.currentPhone ?? phoneDigits(socket.user?.id ?? '')}@s.whatsapp.net`;
  }

  async getMessages({
    contact,
    limit,
    onlyPhones,
  }: {
    contact?: string;
    limit: number;
    onlyPhones?: readonly string[];
  }): Promise<BufferedMessage[]> {
    const capped = Math.max(
      1,
      Math.min(WHATSAPP_MESSAGES_MAX_LIMIT, Math.floor(limit)),
    );
    return this.store.find({ contact, limit: capped, onlyPhones });
  }

  /** Resolves when every message delivered so far is stored (and announced). */
  settled(): Promise<void> {
    return this.inbox;
  }

  /** Reconnects if the backoff delay has passed on the app clock (the timer calls it; tests call it after moving the clock). */
  reconnectIfDue(): boolean {
    if (!this.nextReconnectAt || this.socket) return false;
    const left = this.nextReconnectAt.getTime() - this.clock.now().getTime();
    if (left > 0) {
      this.armTimer(left);
      return false;
    }
    this.reconnectNow();
    return true;
  }

  private reconnectNow(): void {
    this.clearReconnect();
    this.setState({ status: 'connecting' });
    void this.openSocket();
  }

  private async openSocket(): Promise<void> {
    const generation = ++this.generation;
    let socket: WhatsAppSocket;
    try {
      socket = await this.factory.create({ authDir: this.authDir });
    } catch (error) {
      if (generation !== this.generation || this.closing) return;
      this.logger.error(
        `Could not open the WhatsApp socket: ${(error as Error).message}`,
      );
      this.scheduleReconnect(
        'Could not open the WhatsApp connection',
        'unreachable',
      );
      return;
    }
    if (generation !== this.generation || this.closing) {
      socket.end(undefined);
      return;
    }
    this.attach(socket);
  }

  private attach(socket: WhatsAppSocket): void {
    const onUpdate = (update: WhatsAppConnectionUpdate) => {
      if (this.socket === socket) this.onConnectionUpdate(socket, update);
    };
    const onUpsert = (upsert: WhatsAppMessagesUpsert) => {
      if (this.socket === socket) this.onMessagesUpsert(socket, upsert);
    };
    socket.ev.on('connection.update', onUpdate);
    socket.ev.on('messages.upsert', onUpsert);
    this.socket = socket;
    this.detachSocket = () => {
      socket.ev.off('connection.update', onUpdate);
      socket.ev.off('messages.upsert', onUpsert);
    };
  }

  private releaseSocket(): WhatsAppSocket | null {
    const socket = this.socket;
    this.detachSocket?.();
    this.detachSocket = null;
    this.socket = null;
    this.connectedAt = null;
    return socket;
  }

  private onConnectionUpdate(
    socket: WhatsAppSocket,
    update: WhatsAppConnectionUpdate,
  ): void {
    if (update.qr) void this.showQr(socket, update.qr);
    if (update.connection === 'open') {
      this.currentQr = null;
      this.connectedAt = this.clock.now().getTime();
      const id = socket.user?.id;
      this.setState({
        status: 'connected',
        phoneNumber: id ? phoneDigits(id) || null : null,
        reason: null,
        problem: null,
      });
      this.logger.log('WhatsApp connected');
    } else if (update.connection === 'close') {
      this.onClose(update);
    }
  }

  private async showQr(socket: WhatsAppSocket, qr: string): Promise<void> {
    // Loaded with the first QR code (a linked device never needs it).
    const { toDataURL } = await import('qrcode');
    const dataUrl = await toDataURL(qr, {
      type: 'image/png',
      width: QR_SIZE_PX,
      margin: 1,
    });
    if (this.socket !== socket || this.currentStatus === 'connected') return;
    this.currentQr = dataUrl;
    this.setState({ status: 'qr_ready' });
    this.events.emit('whatsapp.qr', {
      qr: dataUrl,
      at: this.clock.now().toISOString(),
    });
  }

  private onClose(update: WhatsAppConnectionUpdate): void {
    const code = disconnectCode(update);
    const wasStable =
      this.connectedAt !== null &&
      this.clock.now().getTime() - this.connectedAt >= RECONNECT_STABLE_MS;
    const socket = this.releaseSocket();
    socket?.end(undefined);
    this.currentQr = null;
    if (wasStable) this.attempts = 0;

    if (
      code === WhatsAppDisconnectCode.loggedOut ||
      code === WhatsAppDisconnectCode.forbidden
    ) {
      const loggedOut = code === WhatsAppDisconnectCode.loggedOut;
      this.attempts = 0;
      this.logger.warn(
        loggedOut
          ? 'WhatsApp logged this device out'
          : 'WhatsApp refused the account (forbidden)',
      );
      // A logged-out session can never be used again: drop it so the next start does not retry it.
      if (loggedOut)
        void rm(this.authDir, { recursive: true, force: true }).catch(
          () => undefined,
        );
      this.setState({
        status: 'disconnected',
        phoneNumber: null,
        reason: loggedOut ? LOGGED_OUT_REASON : FORBIDDEN_REASON,
        problem: loggedOut ? 'logged_out' : 'forbidden',
      });
      return;
    }
    if (code === WhatsAppDisconnectCode.restartRequired) {
      // Part of linking a device: WhatsApp asks for a fresh socket right away.
      this.setState({ status: 'connecting', reason: null, problem: null });
      void this.openSocket();
      return;
    }
    this.scheduleReconnect(
      `Connection closed${code ? ` (${code})` : ''}`,
      problemOfCode(code),
    );
  }

  private scheduleReconnect(
    reason: string,
    problem: WhatsAppLinkProblem,
  ): void {
    const delay = reconnectDelayMs(this.attempts, this.random);
    this.attempts++;
    this.nextReconnectAt = new Date(this.clock.now().getTime() + delay);
    this.setState({
      status: 'connecting',
      reason: `${reason}; reconnecting`,
      problem,
    });
    this.armTimer(delay);
  }

  private armTimer(ms: number): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.reconnectIfDue();
    }, ms);
    this.reconnectTimer.unref();
  }

  private clearReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.nextReconnectAt = null;
  }

  private onMessagesUpsert(
    socket: WhatsAppSocket,
    upsert: WhatsAppMessagesUpsert,
  ): void {
    // The seed keeps `notify` only: `append` is history and own echoes.
    if (upsert.type !== 'notify') return;
    const ownJid = this.ownJid(socket);
    const now = this.clock.now();
    const items = upsert.messages
      .map((raw) => normaliseMessage(raw, ownJid, now.getTime()))
      .filter((item) => item !== null);
    if (items.length === 0) return;
    this.inbox = this.inbox.then(async () => {
      // Stored (one insert for the whole upsert) before anything is announced: a restart finds every message.
      const byId = new Map(
        items.map((item) => [item.message.id, item.message]),
      );
      try {
        const { stored, failed } = await this.store.addMany(
          items.map(({ message, phone }) => ({
            message,
            phone,
            receivedAt: now,
            processing:
              message.fromMe || message.isGroup ? 'skipped' : 'pending',
          })),
        );
        for (const { id, error } of failed)
          this.logger.error(`Could not store WhatsApp message ${id}: ${error}`);
        for (const id of stored)
          this.events.emit('whatsapp.message', {
            message: byId.get(id) as BufferedMessage,
            at: now.toISOString(),
          });
      } catch (error) {
        this.logger.error(
          `Could not store ${items.length} WhatsApp message(s) (${[...byId.keys()].join(', ')}): ${(error as Error).message}`,
        );
      }
    });
  }

  private setState(next: {
    status?: WhatsAppStatus;
    phoneNumber?: string | null;
    reason?: string | null;
    problem?: WhatsAppLinkProblem | null;
  }): void {
    const status = next.status ?? this.currentStatus;
    const phoneNumber =
      next.phoneNumber !== undefined ? next.phoneNumber : this.currentPhone;
    const reason = next.reason !== undefined ? next.reason : this.currentReason;
    const problem =
      next.problem !== undefined ? next.problem : this.currentProblem;
    if (status !== 'connecting') this.clearReconnect();
    if (
      status === this.currentStatus &&
      phoneNumber === this.currentPhone &&
      reason === this.currentReason &&
      problem === this.currentProblem
    )
      return;
    this.currentStatus = status;
    this.currentPhone = phoneNumber;
    this.currentReason = reason;
    this.currentProblem = problem;
    this.events.emit('whatsapp.status', {
      status,
      phoneNumber,
      reason,
      problem,
      at: this.clock.now().toISOString(),
    });
  }
}
