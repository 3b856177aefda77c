import { HttpClient, HttpParams } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import {
  MatButtonToggle,
  MatButtonToggleGroup,
} from '@angular/material/button-toggle';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatProgressBar } from '@angular/material/progress-bar';
import type {
  BudgetCapName,
  BudgetView,
  UsageReport,
  UsageSource,
  UsageTokens,
} from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { estimateCost, formatUsd } from './model-prices';
import { UsageChart } from './usage-chart';

export const USAGE_RANGES = [7, 30, 90, 365] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];

export const SOURCE_LABELS: Record<UsageSource, string> = {
  chat: 'Chats',
  voice: 'Voice calls',
  job: 'Scheduled jobs',
  pulse: 'Pulse',
  'auto-reply': 'WhatsApp auto-replies',
  memory: 'Memory upkeep',
};

const PROVIDER_LABELS: Record<string, string> = {
  openai: 'OpenAI',
  gemini: 'Gemini',
  'openai-compatible': 'Endpoint',
};

/** `2026-03-10` minus 6 days → `2026-03-04` (calendar arithmetic, no time zone). */
export function daysBefore(day: string, days: number): string {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, date - days))
    .toISOString()
    .slice(0, 10);
}

function tokens(row: UsageTokens): number {
  return row.inputTokens + row.outputTokens;
}

/** `/usage`: tokens per day, model and source, with an estimated cost where the model's price is known. */
@Component({
  selector: 'mt-usage-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatButtonToggle,
    MatButtonToggleGroup,
    MatCard,
    MatCardContent,
    MatProgressBar,
    Icon,
    ServerError,
    UsageChart,
  ],
  templateUrl: './usage-page.html',
  styleUrl: './usage-page.scss',
})
export class UsagePage {
  private readonly http = inject(HttpClient);

  protected readonly ranges = USAGE_RANGES;
  protected readonly range = signal<UsageRange>(30);
  protected readonly report = signal<UsageReport | null>(null);
  protected readonly sourceLabels = SOURCE_LABELS;
  protected readonly providerLabels = PROVIDER_LABELS;
  protected readonly format = (n: number) => n.toLocaleString('en-US');

  /** Rows by model with their cost: the server's (prices from Settings), else the console's estimate. */
  protected readonly models = computed(() =>
    (this.report()?.byModel ?? []).map((row) => ({
      ...row,
      cost:
        typeof row.costUsd === 'number' && row.costUsd > 0
          ? row.costUsd
          : estimateCost(row.model, row.inputTokens, row.outputTokens),
    })),
  );

  protected readonly budget = signal<BudgetView | null>(null);
  /** Each cap with what counts against it (no cap: no bar). */
  protected readonly caps = computed(() => {
    const budget = this.budget();
    if (!budget) return [];
    const rows: Array<[BudgetCapName, string, number]> = [
      ['dailyUsd', 'Today', budget.spent.todayUsd],
      [
        'unattendedDailyUsd',
        'Today, unattended',
        budget.spent.unattendedTodayUsd,
      ],
      ['monthlyUsd', 'This month', budget.spent.monthUsd],
    ];
    return rows.map(([cap, label, spent]) => {
      const limit = budget.caps[cap];
      return {
        cap,
        label,
        spent,
        limit,
        percent:
          limit === null
            ? null
            : limit > 0
              ? Math.min(100, Math.round((spent / limit) * 100))
              : 100,
      };
    });
  });
  private readonly budgetResource = liveResource<BudgetView>({
    load: () => this.http.get<BudgetView>(`${API_BASE}/budget`),
    apply: (budget) => this.budget.set(budget),
    hasValue: () => this.budget() !== null,
    failure: "Couldn't load the budget",
    event: { name: 'budget.changed' },
  });

  /** Ends the pause after a provider said the account has no credit left. */
  protected resume(): void {
    this.http
      .post<BudgetView>(`${API_BASE}/budget/resume`, {})
      .subscribe({ next: (budget) => this.budget.set(budget) });
  }
  protected readonly sources = computed(() => {
    const rows = this.report()?.bySource ?? [];
    const all = rows.reduce((sum, row) => sum + tokens(row), 0);
    return rows.map((row) => ({
      ...row,
      share: all ? Math.round((tokens(row) / all) * 100) : 0,
    }));
  });
  protected readonly cost = computed(() => {
    const models = this.models();
    const known = models.filter((m) => m.cost !== null);
    return {
      total: known.reduce((sum, m) => sum + (m.cost ?? 0), 0),
      known: known.length,
      unknown: models.length - known.length,
    };
  });
  protected readonly costText = computed(() => {
    const { total, known, unknown } = this.cost();
    if (!known && unknown) return 'unknown';
    return formatUsd(total);
  });
  protected readonly formatUsd = formatUsd;

  private readonly resource = liveResource<UsageReport>({
    load: () => {
      const last = this.report()?.to;
      // The server's "today" is the owner's; until it is known the default range is asked for.
      const params = last
        ? new HttpParams()
            .set('from', daysBefore(last, this.range() - 1))
            .set('to', last)
        : new HttpParams();
      return this.http.get<UsageReport>(`${API_BASE}/usage`, { params });
    },
    apply: (report) => this.report.set(report),
    hasValue: () => this.report() !== null,
    failure: "Couldn't load the usage",
    // A reply that ended has added its tokens.
    event: {
      name: 'chats.changed',
      affects: (event) => event.change === 'reply-ended',
    },
  });
  protected readonly loading = this.resource.loading;
  protected readonly problem = this.resource.problem;

  protected choose(range: UsageRange): void {
    if (range === this.range()) return;
    this.range.set(range);
    this.resource.reload();
  }

  protected reload(): void {
    this.resource.reload();
    this.budgetResource.reload();
  }
}
