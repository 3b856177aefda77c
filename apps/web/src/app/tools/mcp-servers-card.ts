import { DatePipe } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  inject,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatProgressBar } from '@angular/material/progress-bar';
import type { Observable } from 'rxjs';
import type {
  CreateMcpServerRequest,
  McpServerView,
  McpSignInStarted,
  McpToolView,
  UpdateMcpServerRequest,
} from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';

const SERVERS_URL = `${API_BASE}/mcp/servers`;

/** `KEY=value` per line → a map; `Name: value` for headers. */
export function parsePairs(
  text: string,
  separator: '=' | ':',
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(separator);
    if (!line.trim()) continue;
    if (at <= 0) out[line.trim()] = '';
    else out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/**
 * The owner's MCP servers: add one (a command, or a URL), watch its status live, read
 * every tool's description and schema, switch tools off or mark them safe for
 * unattended runs, and approve a changed definition after seeing the difference.
 */
@Component({
  selector: 'mt-mcp-servers-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    DatePipe,
    MatButton,
    MatCard,
    MatCardContent,
    MatProgressBar,
    Icon,
    ServerError,
  ],
  templateUrl: './mcp-servers-card.html',
  styleUrl: './mcp-servers-card.scss',
})
export class McpServersCard {
  private readonly http = inject(HttpClient);

  protected readonly servers = signal<McpServerView[] | null>(null);
  protected readonly kind = signal<'stdio' | 'http'>('stdio');
  protected readonly adding = signal(false);
  protected readonly addError = signal<string | null>(null);
  protected readonly actionError = signal<string | null>(null);

  private readonly live = liveResource({
    load: () => this.http.get<McpServerView[]>(SERVERS_URL),
    apply: (servers) => this.servers.set(servers),
    hasValue: () => this.servers() !== null,
    failure: "Couldn't load the MCP servers",
    event: { name: 'mcp.changed' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected add(form: HTMLFormElement): void {
    const data = new FormData(form);
    const text = (name: string) => String(data.get(name) ?? '').trim();
    const body: CreateMcpServerRequest = { name: text('name') };
    if (this.kind() === 'stdio') {
      body.command = text('command');
      const args = text('args')
        .split('\n')
        .map((a) => a.trim())
        .filter(Boolean);
      if (args.length) body.args = args;
      const env = parsePairs(text('env'), '=');
      if (Object.keys(env).length) body.env = env;
    } else {
      body.url = text('url');
      const headers = parsePairs(text('headers'), ':');
      if (Object.keys(headers).length) body.headers = headers;
      const hosts = text('allowHosts')
        .split(/[\s,]+/)
        .filter(Boolean);
      if (hosts.length) body.allowHosts = hosts;
    }
    this.adding.set(true);
    this.addError.set(null);
    this.http.post<McpServerView>(SERVERS_URL, body).subscribe({
      next: () => {
        this.adding.set(false);
        form.reset();
        this.reload();
      },
      error: (error: unknown) => {
        this.adding.set(false);
        this.addError.set(
          inlineErrorMessage(error, "Couldn't add the MCP server"),
        );
      },
    });
  }

  protected setEnabled(server: McpServerView, enabled: boolean): void {
    this.run(this.patch(server, { enabled }));
  }

  protected setTool(
    server: McpServerView,
    tool: McpToolView,
    change: { enabled?: boolean; unattended?: boolean },
  ): void {
    this.run(this.patch(server, { tools: { [tool.name]: change } }));
  }

  protected approve(server: McpServerView, tool?: McpToolView): void {
    this.run(
      this.http.post(
        `${SERVERS_URL}/${server.id}/approve`,
        tool ? { tools: tool.name } : {},
      ),
    );
  }

  protected remove(server: McpServerView): void {
    if (!confirm(`Delete the MCP server ${server.name}?`)) return;
    this.run(this.http.delete(`${SERVERS_URL}/${server.id}`));
  }

  protected stateLabel(server: McpServerView): string {
    return server.status.state === 'needs-sign-in'
      ? 'needs sign-in'
      : server.status.state;
  }

  /**
   * Opens the authorization server's page in a new tab. The tab is opened at the click
   * (a tab opened after the request would be taken for a pop-up) and cut from this page
   * (no `opener`) before it leaves for the other site. The redirect comes back to the
   * API, which reconnects the server: its status here changes live.
   */
  protected signIn(server: McpServerView): void {
    this.actionError.set(null);
    const tab = window.open('', '_blank');
    if (tab) tab.opener = null;
    this.http
      .post<McpSignInStarted>(`${SERVERS_URL}/${server.id}/sign-in`, {})
      .subscribe({
        next: (started) => {
          if (started.authorizationUrl && tab)
            tab.location.href = started.authorizationUrl;
          else if (started.authorizationUrl)
            window.location.href = started.authorizationUrl;
          else tab?.close();
          this.reload();
        },
        error: (error: unknown) => {
          tab?.close();
          this.actionError.set(
            inlineErrorMessage(error, 'The sign-in could not start'),
          );
        },
      });
  }

  protected signOut(server: McpServerView): void {
    this.run(this.http.post(`${SERVERS_URL}/${server.id}/sign-out`, {}));
  }

  protected waiting(server: McpServerView): number {
    return server.tools.filter((t) => t.change !== null).length;
  }

  protected json(value: unknown): string {
    return JSON.stringify(value, null, 2);
  }

  private patch(
    server: McpServerView,
    body: UpdateMcpServerRequest,
  ): Observable<unknown> {
    return this.http.patch(`${SERVERS_URL}/${server.id}`, body);
  }

  private run(request: Observable<unknown>): void {
    this.actionError.set(null);
    request.subscribe({
      next: () => this.reload(),
      error: (error: unknown) =>
        this.actionError.set(inlineErrorMessage(error, 'That did not work')),
    });
  }
}
