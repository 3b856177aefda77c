import { DateTime } from 'luxon';

/**
 * The day (`YYYY-MM-DD`) of an instant in a time zone. The bounds of the last day found are
 * kept, so luxon (a time-zone object and an `Intl` formatter) runs once a day, not on every
 * model call and usage count.
 */
export class ZonedDay {
  private last: {
    zone: string;
    day: string;
    from: number;
    until: number;
  } | null = null;

  of(at: number, zone: string): string {
    const last = this.last;
    if (last && last.zone === zone && at >= last.from && at < last.until)
      return last.day;
    const start = DateTime.fromMillis(at, { zone }).startOf('day');
    const day = start.toISODate() as string;
    // `plus({ days: 1 })` in the zone: a day of 23 or 25 hours (a clock change) ends where it should.
    this.last = {
      zone,
      day,
      from: start.toMillis(),
      until: start.plus({ days: 1 }).toMillis(),
    };
    return day;
  }
}
