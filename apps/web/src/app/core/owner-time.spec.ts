import { formatOwnerTime } from './owner-time';

/** Fixed instants and zones: the browser running the test (its zone, its locale) must not matter. */
describe('formatOwnerTime', () => {
  // Wednesday 25 November 2026, 15:00 UTC = 16:00 in Paris, 10:00 in New York, 00:00 (Thursday) in Tokyo.
  const now = new Date('2026-11-25T15:00:00.000Z');
  const at = (
    iso: string,
    zone: string,
    style?: 'relative' | 'absolute' | 'full',
  ) => formatOwnerTime(iso, zone, style, now);

  it('says recent and near times relatively', () => {
    expect(at('2026-11-25T14:59:30.000Z', 'Europe/Paris')).toBe('just now');
    expect(at('2026-11-25T14:55:00.000Z', 'Europe/Paris')).toBe('5 min ago');
    expect(at('2026-11-25T15:20:00.000Z', 'Europe/Paris')).toBe('in 20 min');
    expect(at('2026-11-25T14:01:00.000Z', 'Europe/Paris')).toBe('59 min ago');
  });

  it('names the day in the owner’s zone, not the browser’s', () => {
    // 13:03 UTC: today 14:03 in Paris.
    expect(at('2026-11-25T13:03:00.000Z', 'Europe/Paris')).toBe('14:03');
    // 22:30 UTC the day before: 23:30 in Paris, 07:30 on Wednesday in Tokyo (where it is Thursday now).
    expect(at('2026-11-24T22:30:00.000Z', 'Europe/Paris')).toBe(
      'yesterday 23:30',
    );
    expect(at('2026-11-24T22:30:00.000Z', 'Asia/Tokyo')).toBe(
      'yesterday 07:30',
    );
    expect(at('2026-11-25T13:03:00.000Z', 'Asia/Tokyo')).toBe(
      'yesterday 22:03',
    );
    expect(at('2026-11-25T13:03:00.000Z', 'America/New_York')).toBe('08:03');
    expect(at('2026-11-26T07:00:00.000Z', 'Europe/Paris')).toBe(
      'tomorrow 08:00',
    );
  });

  it('gives the weekday within a week, then the date, with the year only when it differs', () => {
    expect(at('2026-11-21T09:15:00.000Z', 'UTC')).toBe('Sat 09:15');
    expect(at('2026-11-02T09:15:00.000Z', 'UTC')).toBe('2 Nov, 09:15');
    expect(at('2025-12-31T23:30:00.000Z', 'UTC')).toBe('31 Dec 2025, 23:30');
    // The same instant is already 2026 in Paris.
    expect(at('2025-12-31T23:30:00.000Z', 'Europe/Paris')).toBe('1 Jan, 00:30');
  });

  it('writes absolute and full times in one format', () => {
    expect(at('2026-11-23T07:00:00.000Z', 'Europe/Paris', 'absolute')).toBe(
      'Mon 23 Nov, 08:00',
    );
    expect(at('2025-07-01T12:05:00.000Z', 'UTC', 'absolute')).toBe(
      'Tue 1 Jul 2025, 12:05',
    );
    expect(at('2026-11-23T07:00:05.000Z', 'America/New_York', 'full')).toBe(
      'Monday 23 November 2026, 02:00:05 (America/New_York)',
    );
  });

  it('shows nothing for a missing or broken date, and falls back to the browser for an unknown zone', () => {
    expect(formatOwnerTime(null, 'UTC')).toBe('');
    expect(formatOwnerTime('', 'UTC')).toBe('');
    expect(formatOwnerTime('not a date', 'UTC')).toBe('');
    expect(
      formatOwnerTime('2026-11-23T07:00:00.000Z', 'Mars/Olympus', 'absolute'),
    ).toMatch(/^(Sun|Mon) 2[23] Nov, \d\d:\d\d$/);
  });
});
