import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
  signal,
} from '@angular/core';
import {
  IMAGE_TOOL_NAMES,
  type ToolCallRecord,
} from '@metatronos/shared-types';
import { Icon } from '../ui/icon';
import { MediaImage } from './media-image';
import { toolArguments, toolLabel, toolSummary } from './tool-labels';
import { actionLabel } from '../actions/action-words';

export type ToolCallStatus =
  | 'running'
  | 'ok'
  | 'error'
  | 'unfinished'
  | 'waiting';

/** Pretty JSON for humans: objects indented; a JSON string (a tool result) parsed first; anything else as is. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The picture a successful generate_image / edit_image call made, or null for any other call or result. */
export interface ToolImage {
  mediaId: string;
  description: string;
  width: number | null;
  height: number | null;
}

export function imageOfCall(call: ToolCallRecord): ToolImage | null {
  if (
    !(IMAGE_TOOL_NAMES as readonly string[]).includes(call.name) ||
    call.error ||
    !call.result
  )
    return null;
  let result: unknown;
  try {
    result = JSON.parse(call.result);
  } catch {
    return null;
  }
  const { success, mediaId, width, height } = (result ?? {}) as Record<
    string,
    unknown
  >;
  // Only a well-formed id becomes a URL: the result is the model's and the tool's output, not trusted markup.
  if (
    success !== true ||
    typeof mediaId !== 'string' ||
    !/^[0-9a-f]{24}$/i.test(mediaId)
  )
    return null;
  const description = call.arguments['shortDescription'];
  const size = (value: unknown) =>
    typeof value === 'number' && Number.isInteger(value) && value > 0
      ? value
      : null;
  return {
    mediaId,
    description: typeof description === 'string' ? description : '',
    width: size(width),
    height: size(height),
  };
}

const STATUS_LABELS: Record<ToolCallStatus, string> = {
  running: 'running',
  ok: 'done',
  error: 'failed',
  unfinished: 'not finished',
  waiting: 'asked for your approval',
};

/**
 * One tool call inside an assistant reply: what it did in words, what about, status and duration; expands
 * to its arguments as `key: value` rows and a result that is shown on request.
 */
@Component({
  selector: 'mt-tool-chip',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon, MediaImage],
  template: `
    <div
      class="chip"
      data-testid="tool-chip"
      [attr.data-status]="status()"
      [attr.data-tool]="call().name"
    >
      <button
        type="button"
        class="head"
        data-testid="tool-chip-toggle"
        [attr.aria-expanded]="expanded()"
        [attr.aria-controls]="detailsId()"
        (click)="expanded.set(!expanded())"
      >
        <span class="status-icon" aria-hidden="true">
          @switch (status()) {
            @case ('running') {
              <span class="spinner"></span>
            }
            @case ('ok') {
              <mt-icon name="check" />
            }
            @case ('error') {
              <mt-icon name="error" />
            }
            @case ('waiting') {
              <mt-icon name="lock" />
            }
            @default {
              <mt-icon name="stop" />
            }
          }
        </span>
        <mt-icon class="tool-icon" name="build" aria-hidden="true" />
        <span class="name" data-testid="tool-chip-label">{{ label() }}</span>
        @if (summary(); as summary) {
          <span class="summary" data-testid="tool-chip-summary">{{
            summary
          }}</span>
        }
        <span class="status" data-testid="tool-chip-status">{{
          statusLabel()
        }}</span>
        @if (duration(); as duration) {
          <span class="duration" data-testid="tool-chip-duration">{{
            duration
          }}</span>
        }
        <mt-icon
          class="chevron"
          [name]="expanded() ? 'expandLess' : 'expandMore'"
          aria-hidden="true"
        />
      </button>
      @if (call().taint; as taint) {
        <p
          class="taint"
          data-testid="tool-chip-taint"
          [attr.data-by]="taint.by"
          [attr.title]="
            'Text someone else wrote entered this turn here: ' + taint.text
          "
        >
          <mt-icon name="public" aria-hidden="true" />
          <span>read third-party content: {{ taint.text }}</span>
        </p>
      }
      @if (image(); as image) {
        <mt-media-image
          class="image"
          data-testid="tool-chip-image"
          [mediaId]="image.mediaId"
          [description]="image.description"
          [width]="image.width"
          [height]="image.height"
        />
      }
      @if (expanded()) {
        <div class="details" [id]="detailsId()" data-testid="tool-chip-details">
          <p class="tool-name">
            Tool <code>{{ call().name }}</code>
          </p>
          @if (args().length) {
            <dl class="arguments" data-testid="tool-chip-arguments">
              @for (arg of args(); track $index) {
                <div class="argument">
                  <dt>{{ arg.key }}:</dt>
                  <dd>{{ arg.value }}</dd>
                </div>
              }
            </dl>
          } @else {
            <p class="label" data-testid="tool-chip-arguments">No arguments</p>
          }
          @if (call().error; as error) {
            <p class="label">Error</p>
            <pre class="error" data-testid="tool-chip-error">{{ error }}</pre>
          }
          @if (call().result !== null) {
            <button
              type="button"
              class="result-toggle"
              data-testid="tool-chip-result-toggle"
              [attr.aria-expanded]="resultShown()"
              (click)="resultShown.set(!resultShown())"
            >
              <mt-icon
                [name]="resultShown() ? 'expandLess' : 'expandMore'"
                aria-hidden="true"
              />{{ resultShown() ? 'Hide the result' : 'Show the result' }}
            </button>
            @if (resultShown()) {
              <pre data-testid="tool-chip-result">{{ resultText() }}</pre>
            }
          }
        </div>
      }
    </div>
  `,
  styles: `
    :host {
      display: block;
      margin: 6px 0;
    }
    .chip {
      display: inline-flex;
      flex-direction: column;
      max-width: 100%;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: var(--mat-sys-corner-medium);
      background: var(--mat-sys-surface-container-low);
    }
    .chip[data-status='waiting'] {
      border-color: var(--mat-sys-tertiary);
    }
    [data-status='waiting'] .status-icon {
      color: var(--mat-sys-tertiary);
    }
    .taint {
      display: flex;
      align-items: center;
      gap: 4px;
      margin: 0;
      padding: 0 10px 6px;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-small);
      overflow-wrap: anywhere;
      --mt-icon-size: 14px;
    }
    .chip[data-status='error'] {
      border-color: color-mix(in srgb, var(--mat-sys-error) 50%, transparent);
    }
    .head {
      display: flex;
      align-items: center;
      gap: 6px;
      min-height: 32px;
      padding: 4px 10px;
      border: 0;
      border-radius: inherit;
      background: none;
      color: var(--mat-sys-on-surface);
      font: var(--mat-sys-label-large);
      text-align: left;
      cursor: pointer;
      --mt-icon-size: 16px;
    }
    .head:hover {
      background: color-mix(in srgb, var(--mat-sys-on-surface) 6%, transparent);
    }
    .head:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 2px;
    }
    .status-icon {
      display: inline-flex;
      width: 16px;
      justify-content: center;
    }
    [data-status='ok'] .status-icon {
      color: var(--mt-success);
    }
    [data-status='error'] .status-icon {
      color: var(--mat-sys-error);
    }
    .tool-icon,
    .status,
    .duration,
    .chevron {
      color: var(--mat-sys-on-surface-variant);
    }
    .name {
      overflow-wrap: anywhere;
    }
    .summary {
      max-width: 32ch;
      overflow: hidden;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .tool-name {
      margin: 8px 0 4px;
      font: var(--mat-sys-label-small);
      color: var(--mat-sys-on-surface-variant);
    }
    .tool-name code {
      font-family: var(--mt-mono-family);
    }
    .arguments {
      display: grid;
      gap: 2px;
      margin: 0;
      font: var(--mat-sys-body-small);
    }
    .argument {
      display: flex;
      gap: 6px;
      min-width: 0;
    }
    .argument dt {
      flex: none;
      color: var(--mat-sys-on-surface-variant);
    }
    .argument dd {
      margin: 0;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
    .result-toggle {
      display: inline-flex;
      align-items: center;
      gap: 4px;
      margin: 8px 0 4px;
      padding: 2px 4px;
      border: 0;
      background: none;
      color: var(--mat-sys-primary);
      font: var(--mat-sys-label-medium);
      cursor: pointer;
      --mt-icon-size: 16px;
    }
    .result-toggle:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
    }
    .status,
    .duration {
      font: var(--mat-sys-label-medium);
    }
    .spinner {
      width: 12px;
      height: 12px;
      border: 2px solid var(--mat-sys-primary);
      border-right-color: transparent;
      border-radius: 50%;
      animation: mt-spin 0.8s linear infinite;
    }
    .details {
      padding: 0 12px 10px;
    }
    .image {
      padding: 2px 10px 10px;
    }
    .label {
      margin: 8px 0 4px;
      font: var(--mat-sys-label-medium);
      color: var(--mat-sys-on-surface-variant);
    }
    pre {
      max-height: 320px;
      margin: 0;
      padding: 8px 10px;
      overflow: auto;
      border-radius: var(--mat-sys-corner-small);
      background: var(--mat-sys-surface-container-high);
      font: 13px/1.45 var(--mt-mono-family);
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
    pre.error {
      color: var(--mat-sys-error);
    }
    @keyframes mt-spin {
      to {
        transform: rotate(360deg);
      }
    }
  `,
})
export class ToolChip {
  private static nextId = 0;

  readonly call = input.required<ToolCallRecord>();
  /** The reply is over: a call without a result was cut off rather than still running. */
  readonly settled = input(false);

  protected readonly expanded = signal(false);
  protected readonly detailsId = signal(`mt-tool-details-${ToolChip.nextId++}`);

  protected readonly status = computed<ToolCallStatus>(() => {
    const call = this.call();
    if (call.error) return 'error';
    if (call.pendingActionId) return 'waiting';
    if (call.result !== null) return 'ok';
    return this.settled() ? 'unfinished' : 'running';
  });
  protected readonly statusLabel = computed(() => STATUS_LABELS[this.status()]);
  protected readonly duration = computed(() => {
    const ms = this.call().durationMs;
    return ms === null || ms === undefined ? null : formatDuration(ms);
  });
  protected readonly resultShown = signal(false);
  /** A call that waits did not happen: it says what it would do ("Send a WhatsApp message"). */
  protected readonly label = computed(() =>
    this.status() === 'waiting'
      ? actionLabel(this.call().name, this.call().arguments)
      : toolLabel(
          this.call().name,
          this.call().arguments,
          this.status() === 'running',
        ),
  );
  protected readonly summary = computed(() =>
    toolSummary(this.call().name, this.call().arguments),
  );
  protected readonly args = computed(() =>
    toolArguments(this.call().arguments),
  );
  protected readonly resultText = computed(() =>
    prettyJson(this.call().result),
  );
  protected readonly image = computed(() => imageOfCall(this.call()));
}
