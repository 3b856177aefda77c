import {
  duplicateKey,
  planConsolidation,
  type PlannedNote,
} from './consolidation-plan';

const now = new Date('2026-11-02T03:00:00Z');
const day = (n: number) => new Date(now.getTime() - n * 86_400_000);
let seq = 0;
const note = (text: string, over: Partial<PlannedNote> = {}): PlannedNote => ({
  id: `n${++seq}`,
  text,
  source: 'owner',
  status: 'active',
  observedAt: day(10),
  expiresAt: null,
  ...over,
});
const filler = (n: number) =>
  Array.from({ length: n }, (_, i) => note(`distinct fact number ${i} zq${i}`));

describe('duplicateKey', () => {
  it.each([
    ['Anna is allergic to peanuts', 'anna: ALLERGIC to peanuts!'],
    ['Anna has an allergy to peanut', 'Anna: peanuts allergies'],
  ])('%s = %s', (a, b) => expect(duplicateKey(a)).toBe(duplicateKey(b)));

  it('keeps different facts apart', () => {
    expect(duplicateKey('Anna is allergic to peanuts')).not.toBe(
      duplicateKey('Ben is allergic to peanuts'),
    );
  });
});

describe('planConsolidation', () => {
  it('merges duplicates into the newest, keeping the other as a reasoned change', () => {
    const old = note('Anna is allergic to peanuts', {
      observedAt: day(30),
      source: 'contact',
    });
    const fresh = note('anna: allergic to peanuts', { observedAt: day(1) });
    const plan = planConsolidation([old, fresh, ...filler(10)], now);
    expect(plan.refusal).toBeNull();
    expect(plan.merges).toEqual([{ keep: fresh, drop: [old] }]);
    expect(plan.changes[0]).toMatchObject({
      noteId: old.id,
      action: 'merged',
      prior: old.text,
    });
    expect(plan.changes[0].reason).toContain(fresh.id);
  });

  it('drops expired notes, not those expiring later, and leaves proposals alone', () => {
    const gone = note('Parking permit until Sunday', { expiresAt: day(1) });
    const later = note('Gym closed this month', { expiresAt: day(-5) });
    const proposalA = note('owner likes Mallory', { status: 'proposed' });
    const proposalB = note('Owner likes Mallory!', { status: 'proposed' });
    const plan = planConsolidation(
      [gone, later, proposalA, proposalB, ...filler(10)],
      now,
    );
    expect(plan.expired).toEqual([gone]);
    expect(plan.merges).toEqual([]);
  });

  it('refuses a run that would remove more than a quarter of the notes', () => {
    const notes = [
      ...Array.from({ length: 3 }, () => note('x', { expiresAt: day(1) })),
      ...filler(8),
    ];
    const plan = planConsolidation(notes, now);
    expect(plan.refusal).toContain('3 of 11');
    const fine = planConsolidation(
      [note('y', { expiresAt: day(1) }), ...filler(3)],
      now,
    );
    expect(fine.refusal).toBeNull();
  });
});
