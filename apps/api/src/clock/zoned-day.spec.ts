import { DateTime } from 'luxon';
import { ZonedDay } from './zoned-day';

/** What luxon says, computed afresh for every instant (the reference the kept bounds must match). */
function luxonDay(at: number, zone: string): string {
  return DateTime.fromMillis(at, { zone }).toISODate() as string;
}

describe('ZonedDay', () => {
  it('gives the same day as luxon for every instant across clock changes, zones and time going back', () => {
    const days = new ZonedDay();
    const zones = ['Europe/Berlin', 'America/New_York', 'UTC', 'Asia/Kolkata'];
    // Around the spring and autumn changes in both hemispheres' zones, every 17 minutes.
    const starts = ['2026-03-07T00:00:00Z', '2026-10-24T00:00:00Z'];
    for (const zone of zones)
      for (const start of starts) {
        const from = Date.parse(start);
        for (let at = from; at < from + 4 * 86_400_000; at += 17 * 60_000)
          expect(days.of(at, zone)).toBe(luxonDay(at, zone));
        // Back in time (a test clock set earlier): not the kept day.
        expect(days.of(from - 86_400_000, zone)).toBe(
          luxonDay(from - 86_400_000, zone),
        );
      }
  });

  it('switches zone at once: the same instant is another day elsewhere', () => {
    const days = new ZonedDay();
    const at = Date.parse('2026-05-01T23:30:00Z');
    expect(days.of(at, 'UTC')).toBe('2026-05-01');
    expect(days.of(at, 'Europe/Berlin')).toBe('2026-05-02');
    expect(days.of(at, 'America/Los_Angeles')).toBe('2026-05-01');
  });
});
