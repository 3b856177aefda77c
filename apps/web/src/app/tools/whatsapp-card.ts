import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  ElementRef,
  InjectionToken,
  Injector,
  afterNextRender,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatDialog } from '@angular/material/dialog';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import { filter, interval, merge } from 'rxjs';
import type {
  WhatsAppInboundMessage,
  WhatsAppStatus,
  WhatsAppStatusView,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import {
  WhatsAppQrStream,
  type WhatsAppQrStreamHandle,
} from '../core/whatsapp-qr-stream';
import { Icon } from '../ui/icon';
import {
  type InboundItem,
  InboundMessages,
} from '../channels/inbound-messages';
import { NEW_CONTACT_PERMISSIONS } from '../channels/new-contact-permissions';
import { ServerStatus } from '../core/server-status';
import { ServerError } from '../ui/server-error';
import { formatPhone } from './whatsapp-format';
import { whatsAppLinkWords } from './whatsapp-link-words';
import { WhatsAppPermissionsDialog } from './whatsapp-permissions-dialog';
import { OwnerTime } from '../core/owner-time';

/** How often the status is fetched while no linking stream is open. */
export const WHATSAPP_STATUS_POLL_MS = new InjectionToken<number>(
  'WHATSAPP_STATUS_POLL_MS',
  {
    providedIn: 'root',
    factory: () => 10_000,
  },
);

/**
 * The WhatsApp link: its status (a poll every 10 s, the live QR stream while linking), Link device with
 * the QR code, Disconnect with a confirmation, and the contacts Metatron may read and answer.
 */
@Component({
  selector: 'mt-whatsapp-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatProgressBar,
    Icon,
    InboundMessages,
    ServerError,
  ],
  templateUrl: './whatsapp-card.html',
  styleUrl: './whatsapp-card.scss',
})
export class WhatsAppCard {
  private readonly api = inject(ApiClient);
  private readonly time = inject(OwnerTime);
  private readonly qrStream = inject(WhatsAppQrStream);
  private readonly dialog = inject(MatDialog);
  private readonly snackBar = inject(MatSnackBar);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  /** The status as last known: from the poll, or from the stream while linking; null until loaded. */
  protected readonly view = signal<WhatsAppStatusView | null>(null);
  protected readonly qr = signal<string | null>(null);
  protected readonly busy = signal<'connect' | 'disconnect' | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly confirmingDisconnect = signal(false);
  protected readonly clearSession = signal(false);
  /** The linking stream is open. */
  protected readonly linking = signal(false);
  private stream: WhatsAppQrStreamHandle | null = null;
  /** What people sent to the linked number, strangers included, newest first. */
  private readonly inbound = signal<WhatsAppInboundMessage[]>([]);
  protected readonly inboundItems = computed(() =>
    this.inbound().map(
      (message): InboundItem => ({
        id: message.id,
        key: message.phone,
        sender: message.fromName?.trim() || formatPhone(message.phone),
        where: null,
        text: message.text,
        at: message.at,
        processing: message.processing,
        reason: message.reason,
        permitted: message.permitted,
        reply: message.reply,
      }),
    ),
  );
  /** The sender whose Allow is under way. */
  protected readonly allowing = signal<string | null>(null);
  /** The stream reported a linking state (so a later `disconnected` means linking stopped). */
  private streamStarted = false;

  protected readonly status = computed<WhatsAppStatus>(
    () => this.view()?.status ?? 'disconnected',
  );
  protected readonly phoneNumber = computed(() => {
    const phone = this.view()?.phoneNumber;
    return phone ? formatPhone(phone) : null;
  });
  /** The state in plain words (from the status and the server's reason code). */
  protected readonly words = computed(() =>
    whatsAppLinkWords(this.view(), this.phoneNumber()),
  );
  protected readonly statusLabel = computed(() => this.words().label);
  /** What happened, while the link is not up. */
  protected readonly reason = computed(() => this.words().detail);
  protected readonly reconnectAt = computed(() => {
    const at = this.view()?.reconnectAt;
    if (!at || this.status() === 'connected') return null;
    const date = new Date(at);
    return Number.isNaN(date.getTime())
      ? null
      : {
          iso: at,
          text: this.time.format(at, 'absolute'),
        };
  });
  protected readonly canLink = computed(
    () =>
      this.status() === 'disconnected' &&
      this.busy() === null &&
      !this.linking(),
  );
  protected readonly canDisconnect = computed(
    () => this.status() !== 'disconnected' || this.linking(),
  );

  private readonly live = liveResource({
    load: () => this.api.whatsAppStatus(),
    apply: (view) => this.applyPolled(view),
    hasValue: () => !!this.view(),
    failure: "Couldn't load the WhatsApp status",
    // A change the server announces (another tab, a dropped link): fetched, so `reconnectAt` comes too.
    event: { name: 'whatsapp.status' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  constructor() {
    interval(inject(WHATSAPP_STATUS_POLL_MS))
      .pipe(takeUntilDestroyed())
      .subscribe(() => {
        if (!this.linking() && this.busy() === null) this.reload();
      });
    // A QR appeared while no stream is open (linking started in another tab): the status fetch opens it.
    inject(EventStream)
      .on('whatsapp.qr')
      .pipe(takeUntilDestroyed())
      .subscribe(() => {
        if (!this.linking()) this.reload();
      });
    // What people sent, and what the auto-reply made of it, follow the server's events.
    const events = inject(EventStream);
    merge(
      events.on('whatsapp.message'),
      events
        .on('channels.inbound')
        .pipe(filter((event) => event.channel === 'whatsapp')),
      events.on('whatsapp.permissions.changed'),
      toObservable(inject(ServerStatus).recovered),
    )
      .pipe(takeUntilDestroyed())
      .subscribe(() => this.loadInbound());
    inject(DestroyRef).onDestroy(() => this.closeStream());
  }

  private loadInbound(): void {
    this.api.whatsAppInbound().subscribe({
      next: (messages) => this.inbound.set(messages),
      error: () => undefined,
    });
  }

  /** One click, as on Telegram: the sender becomes a contact with Read and Reply on (not trusted). */
  protected allow(item: InboundItem): void {
    const displayName = item.sender;
    this.allowing.set(item.key);
    this.api
      .createWhatsAppPermission({
        phoneNumber: item.key,
        displayName,
        ...NEW_CONTACT_PERMISSIONS,
      })
      .subscribe({
        next: () => {
          this.allowing.set(null);
          this.snackBar.open(
            `${displayName} may now write to Metatron.`,
            undefined,
            { duration: 3000 },
          );
          this.loadInbound();
        },
        error: (error: unknown) => {
          this.allowing.set(null);
          this.snackBar.open(
            inlineErrorMessage(error, 'That did not work. Try again.'),
            'Close',
          );
        },
      });
  }

  protected link(): void {
    if (!this.canLink()) return;
    this.busy.set('connect');
    this.error.set(null);
    this.api.connectWhatsApp().subscribe({
      next: (answer) => {
        this.busy.set(null);
        if (answer.status === 'already_connected') {
          this.view.set({
            status: 'connected',
            phoneNumber: answer.phoneNumber,
          });
          return;
        }
        this.view.set({ status: 'connecting', phoneNumber: null });
        this.openStream();
      },
      error: (error: unknown) => {
        this.busy.set(null);
        this.error.set(
          inlineErrorMessage(error, "Couldn't start linking. Try again."),
        );
      },
    });
  }

  protected askDisconnect(): void {
    this.error.set(null);
    this.clearSession.set(false);
    this.confirmingDisconnect.set(true);
    this.focus('whatsapp-disconnect-cancel');
  }

  protected cancelDisconnect(): void {
    this.confirmingDisconnect.set(false);
    this.focus('whatsapp-disconnect');
  }

  protected confirmDisconnect(): void {
    const clearSession = this.clearSession();
    this.confirmingDisconnect.set(false);
    this.busy.set('disconnect');
    this.error.set(null);
    this.api.disconnectWhatsApp(clearSession).subscribe({
      next: () => {
        this.busy.set(null);
        this.closeStream();
        this.view.set({ status: 'disconnected', phoneNumber: null });
        this.snackBar.open(
          clearSession
            ? 'WhatsApp disconnected and the saved session cleared.'
            : 'WhatsApp disconnected.',
          undefined,
          {
            duration: 3000,
          },
        );
      },
      error: (error: unknown) => {
        this.busy.set(null);
        this.error.set(
          inlineErrorMessage(error, "Couldn't disconnect. Try again."),
        );
      },
    });
  }

  protected managePermissions(): void {
    this.dialog.open(WhatsAppPermissionsDialog, {
      width: '720px',
      maxWidth: '95vw',
      ariaLabelledBy: 'whatsapp-permissions-title',
      autoFocus: 'first-heading',
    });
  }

  private applyPolled(view: WhatsAppStatusView): void {
    if (this.linking()) return;
    this.view.set(view);
    if (view.status === 'qr_ready') this.openStream();
    else this.qr.set(null);
  }

  private openStream(): void {
    if (this.stream) return;
    this.streamStarted = false;
    this.linking.set(true);
    this.stream = this.qrStream.open({
      onQr: (qr) => {
        this.qr.set(qr);
        this.view.set({ status: 'qr_ready', phoneNumber: null });
      },
      onStatus: (status, phoneNumber, details) => {
        if (status === 'connected') {
          // Without the number yet, the `connected` event brings it.
          if (phoneNumber) this.connected(phoneNumber);
          else this.view.set({ status, phoneNumber: null, ...details });
          return;
        }
        if (status === 'disconnected') {
          // The first status may still be the one before linking began.
          if (!this.streamStarted) return;
          this.closeStream();
          this.view.set({ status, phoneNumber: null, ...details });
          this.reload();
          return;
        }
        this.streamStarted = true;
        if (status !== 'qr_ready') this.qr.set(null);
        this.view.set({ status, phoneNumber, ...details });
      },
      onConnected: (phoneNumber) => this.connected(phoneNumber),
      onError: () => {
        this.closeStream();
        this.reload();
      },
    });
  }

  private connected(phoneNumber: string | null): void {
    this.closeStream();
    this.view.set({
      status: 'connected',
      phoneNumber: phoneNumber ?? this.view()?.phoneNumber ?? null,
    });
  }

  private closeStream(): void {
    this.stream?.close();
    this.stream = null;
    this.linking.set(false);
    this.qr.set(null);
  }

  private focus(testId: string): void {
    afterNextRender(
      () =>
        this.host.nativeElement
          .querySelector<HTMLElement>(`[data-testid="${testId}"]`)
          ?.focus(),
      {
        injector: this.injector,
      },
    );
  }
}
