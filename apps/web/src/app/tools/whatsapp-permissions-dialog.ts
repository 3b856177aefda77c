import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton, MatIconButton } from '@angular/material/button';
import {
  MatDialogActions,
  MatDialogContent,
  MatDialogRef,
  MatDialogTitle,
} from '@angular/material/dialog';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSlideToggle } from '@angular/material/slide-toggle';
import type { WhatsAppPermission } from '@metatronos/shared-types';
import { NEW_CONTACT_PERMISSIONS } from '../channels/new-contact-permissions';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import {
  CONFIRM,
  LEAVE_QUESTION,
  warnBeforeUnload,
} from '../core/unsaved-changes';
import {
  OwnerTime,
  browserTimeZone,
  formatOwnerTime,
} from '../core/owner-time';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';
import { ServerError } from '../ui/server-error';
import { formatPhone } from './whatsapp-format';

/** The switches of a permission row. */
export type PermissionSwitch = 'canRead' | 'canReply' | 'trusted';

/** Longest display name the form takes. */
export const WHATSAPP_DISPLAY_NAME_MAX_LENGTH = 100;

/** Phone numbers have at most 15 digits (E.164); fewer than 7 cannot be a full international number. */
const PHONE_MIN_DIGITS = 7;
const PHONE_MAX_DIGITS = 15;

export function phoneDigits(value: string): string {
  return value.replace(/\D/g, '');
}

export function phoneNumberError(value: string): string | null {
  const digits = phoneDigits(value);
  if (!digits) return 'Enter a phone number.';
  if (digits.length < PHONE_MIN_DIGITS || digits.length > PHONE_MAX_DIGITS)
    return 'Enter the full number with its country code, e.g. +1 415 555 1234.';
  return null;
}

/** When the bot-loop guard has paused the contact's auto-replies ("tomorrow 14:05", in the owner's zone); null when not paused now. */
export function autoReplyPausedUntil(
  permission: WhatsAppPermission,
  now = Date.now(),
  zone = browserTimeZone(),
): string | null {
  const until = permission.autoReplyPausedUntil
    ? Date.parse(permission.autoReplyPausedUntil)
    : NaN;
  if (!(until > now)) return null;
  return formatOwnerTime(until, zone, 'relative', new Date(now));
}

function byName(a: WhatsAppPermission, b: WhatsAppPermission): number {
  return (
    a.displayName.localeCompare(b.displayName, undefined, {
      sensitivity: 'base',
    }) || a.phoneNumber.localeCompare(b.phoneNumber)
  );
}

/** The WhatsApp contacts Metatron may see: list, add, switch read/reply/trusted, and remove. */
@Component({
  selector: 'mt-whatsapp-permissions-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatDialogTitle,
    MatDialogContent,
    MatDialogActions,
    MatFormField,
    MatHint,
    MatLabel,
    MatInput,
    MatProgressBar,
    MatSlideToggle,
    Icon,
    InvalidInput,
    ServerError,
  ],
  templateUrl: './whatsapp-permissions-dialog.html',
  styleUrl: './whatsapp-permissions-dialog.scss',
})
export class WhatsAppPermissionsDialog {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  /** Null until loaded; sorted by name. */
  protected readonly permissions = signal<WhatsAppPermission[] | null>(null);
  /** Rows with a request running. */
  protected readonly pending = signal<ReadonlySet<string>>(new Set());
  /** A failed change per row. */
  protected readonly rowErrors = signal<Readonly<Record<string, string>>>({});
  protected readonly confirmingDelete = signal<string | null>(null);

  protected readonly nameMax = WHATSAPP_DISPLAY_NAME_MAX_LENGTH;
  protected readonly phone = signal('');
  protected readonly name = signal('');
  protected readonly touched = signal<ReadonlySet<'phone' | 'name'>>(new Set());
  protected readonly adding = signal(false);
  protected readonly addError = signal<string | null>(null);
  protected readonly phoneError = computed(() =>
    phoneNumberError(this.phone()),
  );
  protected readonly nameError = computed(() =>
    this.name().trim() ? null : 'Enter a name.',
  );
  protected readonly phoneInvalid = computed(
    () => this.touched().has('phone') && !!this.phoneError(),
  );
  protected readonly nameInvalid = computed(
    () => this.touched().has('name') && !!this.nameError(),
  );

  private readonly live = liveResource({
    load: () => this.api.whatsAppPermissions(),
    apply: (permissions) => this.permissions.set([...permissions].sort(byName)),
    hasValue: () => this.permissions() !== null,
    failure: "Couldn't load the WhatsApp permissions",
    // Changed elsewhere (e.g. by the AI's whatsapp_manage_permission); a row with a request running waits for its answer.
    event: {
      name: 'whatsapp.permissions.changed',
      isOwn: (event) => this.pending().has(event.id),
    },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected readonly formatPhone = formatPhone;
  private readonly time = inject(OwnerTime);
  protected pausedUntil(permission: WhatsAppPermission): string | null {
    return autoReplyPausedUntil(
      permission,
      this.time.now().getTime(),
      this.time.zone(),
    );
  }

  private readonly dialogRef = inject(MatDialogRef, { optional: true });
  private readonly confirm = inject(CONFIRM);
  /** A contact typed into the add form but not added yet. */
  private readonly dirty = computed(
    () => !!this.phone().trim() || !!this.name().trim(),
  );

  constructor() {
    warnBeforeUnload(this.dirty, () => this.add());
    // Escape and the backdrop close through close(), which asks first when a contact was typed but not added.
    const ref = this.dialogRef;
    if (ref) {
      ref.disableClose = true;
      ref
        .backdropClick()
        .pipe(takeUntilDestroyed())
        .subscribe(() => this.close());
      ref
        .keydownEvents()
        .pipe(takeUntilDestroyed())
        .subscribe((event) => {
          if (event.key !== 'Escape') return;
          event.preventDefault();
          this.close();
        });
    }
  }

  /** Closes the dialog; a contact typed but not added is only dropped once the owner agrees. */
  protected close(): void {
    if (!this.dirty() || this.confirm(LEAVE_QUESTION)) this.dialogRef?.close();
  }

  protected isPending(id: string): boolean {
    return this.pending().has(id);
  }

  protected toggle(
    permission: WhatsAppPermission,
    field: PermissionSwitch,
    value: boolean,
  ): void {
    const before = permission[field];
    this.setRowError(permission.id, null);
    this.replace({ ...permission, [field]: value });
    this.setPending(permission.id, true);
    this.api
      .updateWhatsAppPermission(permission.id, { [field]: value })
      .subscribe({
        next: (updated) => {
          this.setPending(permission.id, false);
          this.replace(updated);
        },
        error: (error: unknown) => {
          this.setPending(permission.id, false);
          const current = this.permissions()?.find(
            (item) => item.id === permission.id,
          );
          if (current) this.replace({ ...current, [field]: before });
          this.setRowError(
            permission.id,
            inlineErrorMessage(
              error,
              `Couldn't change ${permission.displayName}. Try again.`,
            ),
          );
        },
      });
  }

  /** Lifts the bot-loop pause: the contact's next message is answered again. */
  protected resume(permission: WhatsAppPermission): void {
    this.setRowError(permission.id, null);
    this.setPending(permission.id, true);
    this.api.resumeWhatsAppAutoReply(permission.id).subscribe({
      next: (updated) => {
        this.setPending(permission.id, false);
        this.replace(updated);
      },
      error: (error: unknown) => {
        this.setPending(permission.id, false);
        this.setRowError(
          permission.id,
          inlineErrorMessage(
            error,
            `Couldn't resume the auto-replies to ${permission.displayName}. Try again.`,
          ),
        );
      },
    });
  }

  protected askDelete(permission: WhatsAppPermission): void {
    this.setRowError(permission.id, null);
    this.confirmingDelete.set(permission.id);
    this.focus(`[data-testid="cancel-delete-permission"]`);
  }

  protected cancelDelete(permission: WhatsAppPermission): void {
    this.confirmingDelete.set(null);
    this.focus(
      `[data-permission-id="${permission.id}"] [data-testid="delete-permission"]`,
    );
  }

  protected confirmDelete(permission: WhatsAppPermission): void {
    this.confirmingDelete.set(null);
    this.setPending(permission.id, true);
    this.api.deleteWhatsAppPermission(permission.id).subscribe({
      next: () => {
        this.setPending(permission.id, false);
        this.permissions.update((list) =>
          (list ?? []).filter((item) => item.id !== permission.id),
        );
      },
      error: (error: unknown) => {
        this.setPending(permission.id, false);
        this.setRowError(
          permission.id,
          inlineErrorMessage(
            error,
            `Couldn't remove ${permission.displayName}. Try again.`,
          ),
        );
      },
    });
  }

  protected touch(field: 'phone' | 'name'): void {
    this.touched.update((set) => new Set([...set, field]));
  }

  protected editPhone(value: string): void {
    this.phone.set(value);
    this.addError.set(null);
  }

  protected editName(value: string): void {
    this.name.set(value);
    this.addError.set(null);
  }

  protected add(): void {
    if (this.adding()) return;
    this.touched.set(new Set(['phone', 'name']));
    if (this.phoneError() || this.nameError()) {
      this.focus(
        this.phoneError()
          ? '[data-testid="permission-phone-input"]'
          : '[data-testid="permission-name-input"]',
      );
      return;
    }
    this.adding.set(true);
    this.addError.set(null);
    this.api
      .createWhatsAppPermission({
        phoneNumber: phoneDigits(this.phone()),
        displayName: this.name().trim(),
        ...NEW_CONTACT_PERMISSIONS,
      })
      .subscribe({
        next: (created) => {
          this.adding.set(false);
          this.permissions.update((list) =>
            [
              ...(list ?? []).filter((item) => item.id !== created.id),
              created,
            ].sort(byName),
          );
          this.phone.set('');
          this.name.set('');
          this.touched.set(new Set());
          this.focus('[data-testid="permission-phone-input"]');
        },
        error: (error: unknown) => {
          this.adding.set(false);
          this.addError.set(
            inlineErrorMessage(error, "Couldn't add the contact. Try again."),
          );
        },
      });
  }

  private replace(permission: WhatsAppPermission): void {
    this.permissions.update((list) =>
      (list ?? [])
        .map((item) => (item.id === permission.id ? permission : item))
        .sort(byName),
    );
  }

  private setPending(id: string, on: boolean): void {
    this.pending.update((set) => {
      const next = new Set(set);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  }

  private setRowError(id: string, message: string | null): void {
    this.rowErrors.update((errors) => {
      const { [id]: _previous, ...rest } = errors;
      return message ? { ...rest, [id]: message } : rest;
    });
  }

  private focus(selector: string): void {
    afterNextRender(
      () =>
        this.host.nativeElement.querySelector<HTMLElement>(selector)?.focus(),
      { injector: this.injector },
    );
  }
}
