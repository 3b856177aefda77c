import type { BudgetCapName, BudgetCaps } from '@metatronos/shared-types';

/** Spend of one owner's day: everything, and what unattended work spent. */
interface DaySpend {
  all: number;
  unattended: number;
}

export interface ReserveRequest {
  /** The call's worst-case cost in USD. */
  costUsd: number;
  unattended: boolean;
  /** The owner's day (`YYYY-MM-DD`) the call is made on. */
  day: string;
  caps: BudgetCaps;
  /** The owner allowed this reply over the daily and monthly caps (attended only). */
  overBudget?: boolean;
}

/** Why a reservation was refused: the cap it would cross, with what is spent and reserved against it. */
export interface CapRefusal {
  cap: BudgetCapName;
  limitUsd: number;
  spentUsd: number;
  reservedUsd: number;
  costUsd: number;
}

export type ReserveResult =
  | { ok: true; id: number }
  | { ok: false; refusal: CapRefusal };

interface Reservation {
  costUsd: number;
  unattended: boolean;
}

/**
 * The in-process ledger of what was spent (per owner's day and month) and what
 * calls under way may still spend. A reservation is checked and added in one
 * synchronous step, so concurrent calls of the one API process can never both
 * pass a cap that fits only one of them (the database's findAndModify gives no
 * such guarantee on FerretDB); the database keeps the durable record.
 */
export class BudgetLedger {
  private readonly days = new Map<string, DaySpend>();
  private readonly months = new Map<string, number>();
  private readonly held = new Map<number, Reservation>();
  private reservedAll = 0;
  private reservedUnattended = 0;
  private nextId = 1;

  /** Adds settled spend to a day (and its month). */
  add(day: string, costUsd: number, unattended: boolean): void {
    if (!(costUsd > 0)) return;
    const spend = this.days.get(day) ?? { all: 0, unattended: 0 };
    spend.all += costUsd;
    if (unattended) spend.unattended += costUsd;
    this.days.set(day, spend);
    const month = day.slice(0, 7);
    this.months.set(month, (this.months.get(month) ?? 0) + costUsd);
  }

  /** Forgets the days before `oldestDay` (they no longer count towards any cap). */
  forgetBefore(oldestDay: string): void {
    for (const day of this.days.keys())
      if (day < oldestDay) this.days.delete(day);
    const oldestMonth = oldestDay.slice(0, 7);
    for (const month of this.months.keys())
      if (month < oldestMonth) this.months.delete(month);
  }

  spent(day: string): {
    todayUsd: number;
    monthUsd: number;
    unattendedTodayUsd: number;
  } {
    const spend = this.days.get(day);
    return {
      todayUsd: spend?.all ?? 0,
      monthUsd: this.months.get(day.slice(0, 7)) ?? 0,
      unattendedTodayUsd: spend?.unattended ?? 0,
    };
  }

  get reservedUsd(): number {
    return this.reservedAll;
  }

  get reservations(): number {
    return this.held.size;
  }

  /** Holds `costUsd` when it fits under every cap that applies, counting what other calls hold. */
  reserve(request: ReserveRequest): ReserveResult {
    const { costUsd, unattended, day, caps } = request;
    const spent = this.spent(day);
    const checks: Array<[BudgetCapName, number | null, number, number]> = [];
    if (!request.overBudget) {
      checks.push([
        'dailyUsd',
        caps.dailyUsd,
        spent.todayUsd,
        this.reservedAll,
      ]);
      checks.push([
        'monthlyUsd',
        caps.monthlyUsd,
        spent.monthUsd,
        this.reservedAll,
      ]);
    }
    if (unattended)
      checks.push([
        'unattendedDailyUsd',
        caps.unattendedDailyUsd,
        spent.unattendedTodayUsd,
        this.reservedUnattended,
      ]);
    for (const [cap, limit, spentUsd, reservedUsd] of checks) {
      if (limit !== null && spentUsd + reservedUsd + costUsd > limit)
        return {
          ok: false,
          refusal: { cap, limitUsd: limit, spentUsd, reservedUsd, costUsd },
        };
    }
    const id = this.nextId++;
    this.held.set(id, { costUsd, unattended });
    this.reservedAll += costUsd;
    if (unattended) this.reservedUnattended += costUsd;
    return { ok: true, id };
  }

  /** Ends a reservation: its hold is released and `actualUsd` counted as spent on `day`. */
  settle(id: number, day: string, actualUsd: number): void {
    const reservation = this.held.get(id);
    if (!reservation) return;
    this.held.delete(id);
    this.reservedAll = Math.max(0, this.reservedAll - reservation.costUsd);
    if (reservation.unattended)
      this.reservedUnattended = Math.max(
        0,
        this.reservedUnattended - reservation.costUsd,
      );
    if (this.held.size === 0) {
      // No drift from float subtraction once nothing is held.
      this.reservedAll = 0;
      this.reservedUnattended = 0;
    }
    this.add(day, actualUsd, reservation.unattended);
  }
}
