import { Injectable, computed, inject, signal } from '@angular/core';
import { Router } from '@angular/router';
import { AuthStore } from '../auth/auth-store';
import { type ServerProblem, serverProblemFrom } from './server-problem';

/**
 * Whether the console can talk to the server. The HTTP interceptor and the route guards report problems here;
 * the root component shows them as a full page (when a navigation could not happen, so there is nothing else
 * to show) or as a banner above the current page.
 */
@Injectable({ providedIn: 'root' })
export class ServerStatus {
  private readonly router = inject(Router);
  private readonly auth = inject(AuthStore);

  private readonly currentProblem = signal<ServerProblem | null>(null);
  private readonly blocked = signal<string | null>(null);
  private readonly busy = signal(false);
  private readonly recoveries = signal(0);

  readonly problem = this.currentProblem.asReadonly();
  /** The URL whose navigation failed because of the problem; the retry goes there. */
  readonly blockedUrl = this.blocked.asReadonly();
  readonly fullPage = computed(
    () => this.currentProblem() !== null && this.blocked() !== null,
  );
  readonly retrying = this.busy.asReadonly();
  /** Counts successful retries, so pages can reload their data when the server is back. */
  readonly recovered = this.recoveries.asReadonly();

  /** A request failed with a connectivity problem while a page was showing. */
  report(problem: ServerProblem): void {
    this.currentProblem.set(problem);
  }

  /** A navigation to `url` could not be decided because the server did not answer. */
  blockNavigation(url: string, problem: ServerProblem): void {
    this.blocked.set(url);
    this.currentProblem.set(problem);
  }

  /** A request succeeded: a banner about an earlier failure is stale now. A blocked navigation still needs a retry. */
  markReachable(): void {
    if (this.currentProblem() && this.blocked() === null)
      this.currentProblem.set(null);
  }

  /**
   * The server answers again after an outage (the event stream dropped, a check failed): the banner goes
   * and pages reload what they show. A blocked navigation still waits for its retry.
   */
  recover(): void {
    if (this.blocked() === null) this.currentProblem.set(null);
    this.recoveries.update((n) => n + 1);
  }

  /** Asks the server again; on success clears the problem and resumes the blocked navigation, if any. */
  retry(): void {
    if (this.busy()) return;
    this.busy.set(true);
    this.auth.ensureStatus(true).subscribe({
      next: () => {
        const url = this.blocked();
        this.blocked.set(null);
        this.currentProblem.set(null);
        this.busy.set(false);
        this.recoveries.update((n) => n + 1);
        if (url !== null) void this.router.navigateByUrl(url);
      },
      error: (error: unknown) => {
        this.currentProblem.set(serverProblemFrom(error));
        this.busy.set(false);
      },
    });
  }
}
