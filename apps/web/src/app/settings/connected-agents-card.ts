import { HttpClient } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  inject,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatFormField, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import {
  MCP_ENDPOINT_PATH,
  MCP_TOKEN_EXPIRY_CHOICES,
  MCP_TOKEN_NAME_MAX_LENGTH,
  type CreateMcpTokenRequest,
  type McpTokenCreated,
  type McpTokenList,
  type McpTokenView,
  type McpToolChoice,
} from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';
import { browserTimeZone, formatOwnerTime } from '../core/owner-time';
import { inlineErrorMessage } from '../core/server-problem';
import { CopyButton } from '../ui/copy-button';
import { Icon } from '../ui/icon';

export const MCP_TOKENS_URL = `${API_BASE}/mcp/tokens`;

/**
 * Settings → Connected agents: bearer tokens for `/mcp`, so the owner's other
 * agents (desktop assistants, IDEs) can use a few of Metatron's read-only
 * tools. A new token is shown once; the list says when each was last used.
 */
@Component({
  selector: 'mt-connected-agents-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatFormField,
    MatInput,
    MatLabel,
    CopyButton,
    Icon,
  ],
  templateUrl: './connected-agents-card.html',
  styleUrl: './connected-agents-card.scss',
})
export class ConnectedAgentsCard {
  private readonly http = inject(HttpClient);
  private readonly zone = browserTimeZone();

  protected readonly nameMax = MCP_TOKEN_NAME_MAX_LENGTH;
  protected readonly endpoint = `${location.origin}${MCP_ENDPOINT_PATH}`;
  protected readonly tokens = signal<McpTokenView[] | null>(null);
  protected readonly choices = signal<McpToolChoice[]>([]);
  protected readonly name = signal('');
  protected readonly picked = signal<ReadonlySet<string>>(new Set());
  protected readonly expiryChoices = MCP_TOKEN_EXPIRY_CHOICES;
  /** Days until a new token expires; null: never. A token that lives forever is a choice, not the default. */
  protected readonly expiresInDays = signal<number | null>(90);
  protected readonly busy = signal(false);
  protected readonly error = signal<string | null>(null);
  /** The token just created: shown until dismissed, never again. */
  protected readonly created = signal<McpTokenCreated | null>(null);
  protected readonly confirmingRevoke = signal<string | null>(null);

  constructor() {
    this.load();
  }

  protected load(): void {
    this.http.get<McpTokenList>(MCP_TOKENS_URL).subscribe({
      next: (list) => {
        this.tokens.set(list.tokens);
        // The defaults are ticked the first time the picker is seen.
        if (this.choices().length === 0)
          this.picked.set(
            new Set(list.choices.filter((c) => c.byDefault).map((c) => c.name)),
          );
        this.choices.set(list.choices);
      },
      error: (error: unknown) =>
        this.error.set(
          inlineErrorMessage(error, 'Could not load the connected agents.'),
        ),
    });
  }

  protected toggle(tool: string, on: boolean): void {
    const next = new Set(this.picked());
    if (on) next.add(tool);
    else next.delete(tool);
    this.picked.set(next);
  }

  protected canCreate(): boolean {
    return !this.busy() && this.name().trim() !== '' && this.picked().size > 0;
  }

  protected create(): void {
    if (!this.canCreate()) return;
    const body: CreateMcpTokenRequest = {
      name: this.name().trim(),
      tools: this.choices()
        .map((c) => c.name)
        .filter((n) => this.picked().has(n)),
      expiresInDays: this.expiresInDays(),
    };
    this.busy.set(true);
    this.error.set(null);
    this.http.post<McpTokenCreated>(MCP_TOKENS_URL, body).subscribe({
      next: (created) => {
        this.busy.set(false);
        this.created.set(created);
        this.name.set('');
        this.load();
      },
      error: (error: unknown) => {
        this.busy.set(false);
        this.error.set(
          inlineErrorMessage(error, 'Could not create the token.'),
        );
      },
    });
  }

  protected revoke(token: McpTokenView): void {
    this.busy.set(true);
    this.error.set(null);
    this.http
      .delete<void>(`${MCP_TOKENS_URL}/${encodeURIComponent(token.id)}`)
      .subscribe({
        next: () => {
          this.busy.set(false);
          this.confirmingRevoke.set(null);
          if (this.created()?.id === token.id) this.created.set(null);
          this.tokens.update((list) =>
            (list ?? []).filter((t) => t.id !== token.id),
          );
        },
        error: (error: unknown) => {
          this.busy.set(false);
          this.error.set(
            inlineErrorMessage(error, 'Could not revoke the token.'),
          );
        },
      });
  }

  protected labelOf(tool: string): string {
    return this.choices().find((c) => c.name === tool)?.label ?? tool;
  }

  protected expiryLabel(days: number | null): string {
    if (days === null) return 'Never';
    return days % 365 === 0
      ? `${days / 365} year${days === 365 ? '' : 's'}`
      : `${days} days`;
  }

  protected pickExpiry(value: string): void {
    this.expiresInDays.set(value === 'never' ? null : Number(value));
  }

  protected expiryText(token: McpTokenView): string {
    if (!token.expiresAt) return 'never expires';
    const when = formatOwnerTime(token.expiresAt, this.zone);
    return token.expired ? `expired ${when}` : `expires ${when}`;
  }

  protected lastUsed(token: McpTokenView): string {
    return token.lastUsedAt
      ? `last used ${formatOwnerTime(token.lastUsedAt, this.zone)}`
      : 'never used';
  }

  protected callsText(token: McpTokenView): string {
    const calls = `${token.calls} call${token.calls === 1 ? '' : 's'}`;
    const failed = token.errors ? `, ${token.errors} refused or failed` : '';
    const byTool = Object.entries(token.callsByTool)
      .sort(([, a], [, b]) => b - a)
      .map(([tool, n]) => `${tool} ${n}`)
      .join(', ');
    return `${calls}${failed}${byTool ? ` (${byTool})` : ''}`;
  }
}
