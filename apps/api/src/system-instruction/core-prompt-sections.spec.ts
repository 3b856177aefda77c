import { formatPromptDateTime } from './core-prompt-sections';

/** What the formatter says with no cache in between. */
function fresh(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts['weekday']}, ${parts['day']} ${parts['month']} ${parts['year']} at ${parts['hour']}:${parts['minute']} (${timeZone}, ${parts['timeZoneName']})`;
}

describe('formatPromptDateTime (cached per zone and minute)', () => {
  it('answers what the formatter says, through a minute and across zones and a DST change', () => {
    const zones = ['Europe/Paris', 'Asia/Kolkata', 'America/St_Johns', 'UTC'];
    // 2026-03-29 00:58:30 UTC: Paris moves from +01:00 to +02:00 at 01:00 UTC.
    const start = Date.UTC(2026, 2, 29, 0, 58, 30);
    for (let s = 0; s < 240; s += 7)
      for (const zone of zones) {
        const at = new Date(start + s * 1000);
        expect(formatPromptDateTime(at, zone)).toBe(fresh(at, zone));
      }
    expect(
      formatPromptDateTime(
        new Date(Date.UTC(2026, 2, 29, 1, 0, 5)),
        'Europe/Paris',
      ),
    ).toBe('Sunday, 29 March 2026 at 03:00 (Europe/Paris, GMT+02:00)');
  });

  it('goes back in time as well (a pulse time after the current one)', () => {
    const later = new Date(Date.UTC(2026, 10, 21, 13, 5, 10));
    const earlier = new Date(Date.UTC(2026, 10, 21, 12, 59, 59));
    expect(formatPromptDateTime(later, 'Europe/Paris')).toContain('14:05');
    expect(formatPromptDateTime(earlier, 'Europe/Paris')).toContain('13:59');
    expect(formatPromptDateTime(later, 'Europe/Paris')).toContain('14:05');
  });

  it('formats a date from before whole-minute offsets without the cache', () => {
    // Monrovia was −00:44:30 until 1972: one UTC minute spans two local minutes.
    const a = new Date(Date.UTC(1960, 0, 1, 12, 0, 10));
    const b = new Date(Date.UTC(1960, 0, 1, 12, 0, 40));
    for (const at of [a, b, a])
      expect(formatPromptDateTime(at, 'Africa/Monrovia')).toBe(
        fresh(at, 'Africa/Monrovia'),
      );
    expect(formatPromptDateTime(a, 'Africa/Monrovia')).toContain('11:15');
    expect(formatPromptDateTime(b, 'Africa/Monrovia')).toContain('11:16');
  });

  it('refuses an unknown zone as the formatter does', () => {
    expect(() => formatPromptDateTime(new Date(), 'Mars/Olympus')).toThrow(
      RangeError,
    );
  });
});
