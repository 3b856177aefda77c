import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatSlideToggle } from '@angular/material/slide-toggle';
import type { ToolView, ToolsResponse } from '@metatronos/shared-types';
import { modeDescription, modeLabel } from '../chat/mode-words';
import { toolTitle } from '../chat/tool-labels';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { ServerError } from '../ui/server-error';

/**
 * The modes and their tools: a chat works in one mode, which decides the tools
 * Metatron has. Each tool shows whether it is available here (and why not) and
 * has a switch that turns it off everywhere (settings `disabledTools`).
 */
@Component({
  selector: 'mt-tool-modes-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatCard, MatCardContent, MatSlideToggle, ServerError],
  template: `
    <mat-card appearance="outlined" class="card" data-testid="tool-modes-card">
      <mat-card-content>
        <h2 id="tool-modes-heading" class="section-title">Modes and tools</h2>
        <p class="section-help">
          Each chat works in one mode, and Metatron gets that mode's tools only
          (fewer tools, better choices, a shorter prompt). It switches mode by
          itself when it needs another one, and you can switch it from the chip
          by the message box. A switched-off tool is never offered.
        </p>
        @if (problem(); as problem) {
          <mt-server-error
            [problem]="problem"
            [retrying]="loading()"
            (retry)="reload()"
          />
        }
        @if (error(); as message) {
          <p class="error" role="alert" data-testid="tool-modes-error">
            {{ message }}
          </p>
        }
        @for (mode of data()?.modes ?? []; track mode.name) {
          <section
            class="mode"
            [attr.data-testid]="'mode-' + mode.name"
            [attr.aria-label]="label(mode.name)"
          >
            <h3 class="mode-title">
              {{ label(mode.name) }}
              <span class="mode-description">{{
                description(mode.name, mode.description)
              }}</span>
            </h3>
            @for (tool of mode.tools; track tool.name) {
              <div class="tool" [attr.data-testid]="'tool-' + tool.name">
                <div class="tool-text">
                  <span class="tool-title" data-testid="tool-title">{{
                    title(tool.name)
                  }}</span>
                  <code class="tool-name">{{ tool.name }}</code>
                  @if (tool.reason) {
                    <span class="reason" data-testid="tool-reason">{{
                      tool.reason
                    }}</span>
                  }
                </div>
                <mat-slide-toggle
                  [checked]="tool.enabled"
                  [disabled]="saving()"
                  [attr.data-testid]="'tool-switch-' + tool.name"
                  [aria-label]="'Offer ' + title(tool.name)"
                  (change)="setEnabled(tool, $event.checked)"
                />
              </div>
            } @empty {
              <p class="none">No tools in this mode yet.</p>
            }
          </section>
        }
      </mat-card-content>
    </mat-card>
  `,
  styles: `
    .card {
      display: block;
    }
    .section-title {
      margin: 0 0 4px;
      font: var(--mat-sys-title-medium);
    }
    .section-help {
      margin: 0 0 12px;
      color: var(--mat-sys-on-surface-variant);
    }
    .mode {
      padding: 8px 0;
      border-top: 1px solid var(--mat-sys-outline-variant);
    }
    .mode-title {
      margin: 0 0 4px;
      font: var(--mat-sys-title-small);
    }
    .mode-description {
      margin-left: 8px;
      font: var(--mat-sys-body-small);
      color: var(--mat-sys-on-surface-variant);
    }
    .tool {
      display: flex;
      align-items: center;
      justify-content: space-between;
      gap: 12px;
      padding: 4px 0;
    }
    .tool-text {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
      min-width: 0;
    }
    .tool-title {
      font: var(--mat-sys-body-medium);
    }
    .tool-name {
      font-family: var(--mt-mono-family);
      font-size: 0.8em;
      color: var(--mat-sys-on-surface-variant);
    }
    .reason,
    .none {
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }
    .error {
      color: var(--mat-sys-error);
    }
  `,
})
export class ToolModesCard {
  private readonly api = inject(ApiClient);

  protected readonly data = signal<ToolsResponse | null>(null);
  protected readonly saving = signal(false);
  protected readonly error = signal<string | null>(null);
  protected readonly label = modeLabel;
  protected readonly description = modeDescription;
  protected readonly title = toolTitle;

  private readonly live = liveResource({
    load: () => this.api.tools(),
    apply: (data) => this.data.set(data),
    hasValue: computed(() => this.data() !== null),
    failure: "Couldn't load the modes",
    event: { name: 'settings.updated' },
  });
  protected readonly loading = this.live.loading;
  protected readonly problem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected setEnabled(tool: ToolView, enabled: boolean): void {
    const off = new Set(
      (this.data()?.modes ?? [])
        .flatMap((m) => m.tools)
        .filter((t) => !t.enabled)
        .map((t) => t.name),
    );
    if (enabled) off.delete(tool.name);
    else off.add(tool.name);
    this.saving.set(true);
    this.error.set(null);
    this.api.updateSettings({ disabledTools: [...off] }).subscribe({
      next: () => {
        this.saving.set(false);
        this.reload();
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.error.set(
          inlineErrorMessage(error, "Couldn't change the tool. Try again."),
        );
        this.reload();
      },
    });
  }
}
