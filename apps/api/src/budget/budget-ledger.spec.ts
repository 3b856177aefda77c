import { BudgetLedger, type ReserveRequest } from './budget-ledger';

const DAY = '2026-03-02';
const CAPS = { dailyUsd: 1, monthlyUsd: 10, unattendedDailyUsd: 0.5 };

function request(overrides: Partial<ReserveRequest> = {}): ReserveRequest {
  return {
    costUsd: 0.1,
    unattended: false,
    day: DAY,
    caps: CAPS,
    ...overrides,
  };
}

describe('BudgetLedger', () => {
  it.each([
    // [what, spent before (all, unattended, month-earlier), request, refused cap or null]
    ['fits under every cap', [0, 0, 0], request(), null],
    ['crosses the daily cap', [0.95, 0, 0], request(), 'dailyUsd'],
    ['lands exactly on the daily cap', [0.9, 0, 0], request(), null],
    [
      'crosses the monthly cap with earlier days',
      [0, 0, 9.95],
      request(),
      'monthlyUsd',
    ],
    [
      'unattended: crosses its own cap',
      [0.45, 0.45, 0],
      request({ unattended: true }),
      'unattendedDailyUsd',
    ],
    [
      'attended: the unattended cap does not apply',
      [0.45, 0.45, 0],
      request(),
      null,
    ],
    [
      'allowed over budget: daily and monthly skipped',
      [5, 0, 20],
      request({ overBudget: true }),
      null,
    ],
    [
      'over budget does not lift the unattended cap',
      [0.5, 0.5, 0],
      request({ unattended: true, overBudget: true }),
      'unattendedDailyUsd',
    ],
    [
      'no cap (null) never refuses',
      [100, 100, 1000],
      request({
        caps: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null },
        unattended: true,
      }),
      null,
    ],
    [
      'a free call fits a used-up cap',
      [1, 0, 0],
      request({ costUsd: 0 }),
      null,
    ],
    [
      'a zero cap refuses any cost',
      [0, 0, 0],
      request({ caps: { ...CAPS, dailyUsd: 0 } }),
      'dailyUsd',
    ],
  ] as const)('%s', (_what, [all, unattended, earlier], req, refused) => {
    const ledger = new BudgetLedger();
    ledger.add(DAY, all - unattended, false);
    ledger.add(DAY, unattended, true);
    ledger.add('2026-03-01', earlier, false);
    const result = ledger.reserve(req);
    if (refused === null) expect(result.ok).toBe(true);
    else expect(result).toMatchObject({ ok: false, refusal: { cap: refused } });
  });

  it('counts holds of calls under way: only as many as fit go out', () => {
    const ledger = new BudgetLedger();
    const results = Array.from({ length: 20 }, () =>
      ledger.reserve(request({ unattended: true, costUsd: 0.15 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(ledger.reservedUsd).toBeCloseTo(0.45, 9);
  });

  it('settles a hold to the reported cost, and frees room', () => {
    const ledger = new BudgetLedger();
    const a = ledger.reserve(request({ unattended: true, costUsd: 0.3 }));
    expect(ledger.reserve(request({ unattended: true, costUsd: 0.3 })).ok).toBe(
      false,
    );
    if (!a.ok) throw new Error('refused');
    ledger.settle(a.id, DAY, 0.05);
    expect(ledger.reservedUsd).toBe(0);
    expect(ledger.spent(DAY)).toEqual({
      todayUsd: 0.05,
      monthUsd: 0.05,
      unattendedTodayUsd: 0.05,
    });
    expect(ledger.reserve(request({ unattended: true, costUsd: 0.3 })).ok).toBe(
      true,
    );
    // Settling twice counts once.
    ledger.settle(a.id, DAY, 0.05);
    expect(ledger.spent(DAY).todayUsd).toBe(0.05);
  });

  it('starts each day afresh but keeps the month', () => {
    const ledger = new BudgetLedger();
    ledger.add(DAY, 0.9, true);
    expect(ledger.spent('2026-03-03')).toEqual({
      todayUsd: 0,
      monthUsd: 0.9,
      unattendedTodayUsd: 0,
    });
    expect(ledger.spent('2026-04-01').monthUsd).toBe(0);
  });
});
