import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  input,
  output,
  signal,
} from '@angular/core';
import type { ChatSummary, ModelOption } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { OwnerTime } from '../core/owner-time';
import { inlineErrorMessage } from '../core/server-problem';

/**
 * The open chat's model: the default (the primary model from the settings) or one the configured providers
 * list. Saved on change with `PATCH /api/chats/:id { model }`.
 */
@Component({
  selector: 'mt-chat-model-picker',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <label class="mt-visually-hidden" [for]="selectId"
      >Model for this chat</label
    >
    <select
      class="picker"
      data-testid="chat-model"
      [id]="selectId"
      [value]="chat().model ?? ''"
      [disabled]="saving()"
      [attr.title]="problem() ?? 'Model for this chat'"
      [class.failed]="!!problem()"
      (focus)="loadModels()"
      (pointerdown)="loadModels()"
      (change)="pick($any($event.target).value)"
    >
      <option value="" data-testid="chat-model-default">
        {{ defaultLabel() }}
      </option>
      @for (model of options(); track model.id) {
        <option [value]="model.id" [selected]="model.id === chat().model">
          {{ model.id }}
        </option>
      }
    </select>
    @if (problem(); as message) {
      <span class="mt-visually-hidden" role="alert">{{ message }}</span>
    }
  `,
  styles: `
    :host {
      display: inline-flex;
      min-width: 0;
      margin-left: auto;
    }
    .picker {
      max-width: 220px;
      min-width: 0;
      padding: 6px 8px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: var(--mat-sys-corner-small);
      background: var(--mat-sys-surface);
      color: var(--mat-sys-on-surface);
      font: var(--mat-sys-label-large);
      text-overflow: ellipsis;
    }
    .picker:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 1px;
    }
    .picker.failed {
      border-color: var(--mat-sys-error);
    }
  `,
})
export class ChatModelPicker {
  private readonly api = inject(ApiClient);

  readonly chat = input.required<ChatSummary>();
  readonly changed = output<ChatSummary>();

  private readonly primaryModel = inject(OwnerTime).primaryModel;
  /** "Default model" alone does not say what answers: name the primary model once the settings are known. */
  protected readonly defaultLabel = computed(() => {
    const primary = this.primaryModel();
    return primary ? `Default model (${primary})` : 'Default model';
  });
  protected readonly selectId = `mt-chat-model-${Math.random().toString(36).slice(2, 8)}`;
  protected readonly saving = signal(false);
  protected readonly problem = signal<string | null>(null);
  private readonly models = signal<ModelOption[]>([]);
  private requested = false;

  /** The listed models, plus the chat's own when no provider lists it (any more). */
  protected readonly options = computed(() => {
    const models = this.models();
    const own = this.chat().model;
    return own && !models.some((m) => m.id === own)
      ? [{ id: own, provider: 'openai-compatible' as const }, ...models]
      : models;
  });

  protected loadModels(): void {
    if (this.requested) return;
    this.requested = true;
    this.api.models().subscribe({
      next: (list) => this.models.set(list.models),
      // The picker keeps "Default model" and the chat's own; the next focus asks again.
      error: () => (this.requested = false),
    });
  }

  protected pick(value: string): void {
    const chat = this.chat();
    const model = value || null;
    if (model === chat.model) return;
    this.saving.set(true);
    this.problem.set(null);
    this.api.updateChat(chat.id, { model }).subscribe({
      next: (updated) => {
        this.saving.set(false);
        this.changed.emit(updated);
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.problem.set(
          inlineErrorMessage(error, "Couldn't change the chat's model."),
        );
      },
    });
  }
}
