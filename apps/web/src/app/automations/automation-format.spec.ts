import { cronRun } from '../testing/automation-data';
import {
  crossesMidnight,
  formatDuration,
  formatInZone,
  formatInterval,
  pulsesPerDayLabel,
  quietHoursError,
  runDetail,
} from './automation-format';

describe('automation formatting', () => {
  /** Dates of this year show no year. */
  const now = new Date('2026-11-25T12:00:00.000Z');
  it('formats a time in the owner’s zone, not the browser’s', () => {
    expect(formatInZone('2026-11-23T07:00:00.000Z', 'Europe/Paris', now)).toBe(
      'Mon 23 Nov, 08:00',
    );
    expect(
      formatInZone('2026-11-23T07:00:00.000Z', 'America/New_York', now),
    ).toBe('Mon 23 Nov, 02:00');
    expect(formatInZone('2026-11-23T23:30:00.000Z', 'Asia/Tokyo', now)).toBe(
      'Tue 24 Nov, 08:30',
    );
    expect(formatInZone('2026-07-01T12:05:00.000Z', 'UTC', now)).toBe(
      'Wed 1 Jul, 12:05',
    );
  });

  it('formats nothing for a missing or broken date, and falls back for an unknown zone', () => {
    expect(formatInZone(null, 'UTC', now)).toBe('');
    expect(formatInZone('not a date', 'UTC', now)).toBe('');
    expect(
      formatInZone('2026-11-23T07:00:00.000Z', 'Mars/Olympus', now),
    ).toMatch(/^Mon 23 Nov, \d\d:00$/);
  });

  it('formats durations and intervals', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_000)).toBe('12 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(120_000)).toBe('2 min');
    expect(formatDuration(3_780_000)).toBe('1 h 3 min');
    expect(formatDuration(null)).toBe('');
    expect(formatInterval(30)).toBe('30 min');
    expect(formatInterval(120)).toBe('2 h');
    expect(formatInterval(90)).toBe('90 min');
  });

  it('labels the pulses-per-day choices', () => {
    expect([48, 24, 12, 6, 2].map(pulsesPerDayLabel)).toEqual([
      'every 30 min',
      'every hour',
      'every 2 h',
      'every 4 h',
      'every 12 h',
    ]);
  });

  it('knows which quiet hours cross midnight and which are invalid', () => {
    expect(crossesMidnight({ start: '22:00', end: '07:00' })).toBe(true);
    expect(crossesMidnight({ start: '12:00', end: '14:00' })).toBe(false);
    expect(quietHoursError({ start: '22:00', end: '22:00' })).toBe(
      'Start and end must differ.',
    );
    expect(quietHoursError({ start: '', end: '07:00' })).toBe(
      'Enter a start and an end time.',
    );
    expect(quietHoursError({ start: '22:00', end: '07:00' })).toBeNull();
  });

  it('explains why a run ended as it did', () => {
    expect(
      runDetail(
        cronRun('r1', { outcome: 'error', error: 'Model quota exceeded' }),
      ),
    ).toBe('Model quota exceeded');
    expect(
      runDetail(cronRun('r2', { outcome: 'skipped', reason: 'busy' })),
    ).toBe('Skipped: the previous run was still going.');
    expect(runDetail(cronRun('r3', { outcome: 'missed', reason: '3' }))).toBe(
      '3 runs were missed while MetatronOS was off.',
    );
    expect(runDetail(cronRun('r4', { outcome: 'missed', reason: '1' }))).toBe(
      '1 run was missed while MetatronOS was off.',
    );
    expect(runDetail(cronRun('r5'))).toBe('');
  });
});
