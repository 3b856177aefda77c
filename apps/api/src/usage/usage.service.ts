import { BadRequestException, Injectable } from '@nestjs/common';
import { DateTime } from 'luxon';
import {
  USAGE_DEFAULT_RANGE_DAYS,
  USAGE_MAX_RANGE_DAYS,
  type UsageBySource,
  type UsageDay,
  type UsageModel,
  type UsageQuery,
  type UsageReport,
  type UsageTokens,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { SettingsService } from '../settings/settings.service';
import { UsageRollups } from './usage-rollups';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** Token usage over a range of the owner's days, from the daily rollups (their copy in memory). */
@Injectable()
export class UsageService {
  constructor(
    private readonly rollups: UsageRollups,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  async report(query: UsageQuery): Promise<UsageReport> {
    const { timezone } = await this.settings.get();
    // Calendar days, compared as UTC dates: today is the owner's date.
    const today = DateTime.fromISO(
      DateTime.fromJSDate(this.clock.now(), {
        zone: timezone,
      }).toISODate() as string,
      { zone: 'UTC' },
    );
    const to = query.to ? parseDay(query.to, 'to') : today;
    const from = query.from
      ? parseDay(query.from, 'from')
      : to.minus({ days: USAGE_DEFAULT_RANGE_DAYS - 1 });
    if (from > to)
      throw new BadRequestException('from must be on or before to');
    const days = Math.round(to.diff(from, 'days').days) + 1;
    if (days > USAGE_MAX_RANGE_DAYS)
      throw new BadRequestException(
        `The range may span at most ${USAGE_MAX_RANGE_DAYS} days (it spans ${days})`,
      );
    const fromDay = from.toISODate() as string;
    const toDay = to.toISODate() as string;

    const rows = await this.rollups.between(fromDay, toDay);

    const byDay = new Map<string, UsageDay>();
    // UTC days are 24 hours long: plain date arithmetic (luxon's `plus` cost most of a year's report).
    for (let i = 0, at = from.toMillis(); i < days; i++, at += DAY_MS) {
      const key = new Date(at).toISOString().slice(0, 10);
      byDay.set(key, { day: key, ...zero() });
    }
    const byModel = new Map<string, UsageModel>();
    const bySource = new Map<string, UsageBySource>();
    const totals = zero();
    for (const row of rows) {
      const day = byDay.get(row.day);
      if (!day) continue;
      add(day, row);
      add(totals, row);
      const model =
        byModel.get(row.model) ??
        byModel
          .set(row.model, {
            model: row.model,
            provider: row.provider,
            ...zero(),
          })
          .get(row.model);
      add(model as UsageModel, row);
      const source =
        bySource.get(row.source) ??
        bySource
          .set(row.source, { source: row.source, ...zero() })
          .get(row.source);
      add(source as UsageBySource, row);
    }
    return {
      from: fromDay,
      to: toDay,
      timezone,
      totals: rounded(totals),
      byDay: [...byDay.values()].map(rounded),
      byModel: [...byModel.values()].sort(byTokens).map(rounded),
      bySource: [...bySource.values()].sort(byTokens).map(rounded),
    };
  }
}

function parseDay(value: string, name: string): DateTime {
  const day = DAY.test(value) ? DateTime.fromISO(value, { zone: 'UTC' }) : null;
  if (!day?.isValid)
    throw new BadRequestException(
      `${name} must be a date written YYYY-MM-DD (got '${value.slice(0, 40)}')`,
    );
  return day;
}

function zero(): UsageTokens {
  return { inputTokens: 0, outputTokens: 0, turns: 0, costUsd: 0 };
}

function add(into: UsageTokens, row: Partial<UsageTokens>): void {
  into.inputTokens += row.inputTokens ?? 0;
  into.outputTokens += row.outputTokens ?? 0;
  into.turns += row.turns ?? 0;
  into.costUsd += row.costUsd ?? 0;
}

/** Costs to the micro-dollar once summed: float sums of many small costs read badly. */
function rounded<T extends UsageTokens>(usage: T): T {
  return { ...usage, costUsd: Math.round(usage.costUsd * 1e6) / 1e6 };
}

function byTokens(a: UsageTokens, b: UsageTokens): number {
  return b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens);
}
