import { CRON_EXPRESSION_MAX_LENGTH } from '@metatronos/shared-types';
import { CronTime } from 'cron';
import { toString as cronstrueToString } from 'cronstrue';
import { IANAZone } from 'luxon';

/** The verdict on a cron expression: its next run times, or why it is refused (owner-readable English). */
export type CronCheck =
  | { ok: true; nextRuns: Date[] }
  | { ok: false; error: string };

const HELP =
  'Use five fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * 1-5".';

/** The `cron` package's presets (it reads them case-insensitively); cronstrue knows only some of them. */
const PRESETS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
  '@minutely': '0 * * * * *',
  '@secondly': '* * * * * *',
  '@weekdays': '0 0 0 * * 1-5',
  '@weekends': '0 0 0 * * 0,6',
};

const MONTH_NAMES = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
const WEEKDAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTH_LABELS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
/** The longest each month can be (February in a leap year). */
const MONTH_MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface FieldSpec {
  label: string;
  low: number;
  high: number;
  /** Names the field accepts instead of numbers: the name at index i stands for low + i. */
  names?: { list: string[]; kind: string };
}

/** The six fields `cron` reads, seconds first; a five-field expression has seconds `0`. */
const FIELDS: readonly FieldSpec[] = [
  { label: 'seconds', low: 0, high: 59 },
  { label: 'minute', low: 0, high: 59 },
  { label: 'hour', low: 0, high: 23 },
  { label: 'day-of-month', low: 1, high: 31 },
  {
    label: 'month',
    low: 1,
    high: 12,
    names: { list: MONTH_NAMES, kind: 'month (jan–dec)' },
  },
  {
    label: 'day-of-week',
    low: 0,
    high: 7,
    names: { list: WEEKDAY_NAMES, kind: 'weekday (sun–sat)' },
  },
];

/** The values of the fields the checks below need (day-of-week 7 folded into 0, as `cron` does). */
interface CronFields {
  seconds: Set<number>;
  secondsText: string;
  daysOfMonth: Set<number>;
  months: Set<number>;
  daysOfWeek: Set<number>;
}

type Compiled =
  | { ok: true; cronTime: CronTime; fields: CronFields }
  | { ok: false; error: string };

function quote(value: string): string {
  return JSON.stringify(value);
}

function invalid(
  expression: string,
  reason: string,
): { ok: false; error: string } {
  return {
    ok: false,
    error: `Invalid cron expression ${quote(expression)}: ${reason}. ${HELP}`,
  };
}

/**
 * Reads one field the way `cron` does (lists, ranges `a-b`, steps `*\/n` / `a-b/n` / `a/n`, names), but
 * names are only taken in their own field. Returns the values or the reason it is refused.
 */
function parseField(text: string, spec: FieldSpec): Set<number> | string {
  const values = new Set<number>();
  for (const original of text.split(',')) {
    if (original === '')
      return `the ${spec.label} field ${quote(text)} has an empty list item`;
    let unknownName: string | null = null;
    let part = original.replace(/[a-z]+/gi, (word) => {
      const index = spec.names?.list.indexOf(word.toLowerCase()) ?? -1;
      if (index < 0) unknownName ??= word;
      return String(index + spec.low);
    });
    if (unknownName !== null) {
      return spec.names
        ? `${quote(unknownName)} in the ${spec.label} field is not a ${spec.names.kind} name`
        : `the ${spec.label} field cannot hold letters like ${quote(unknownName)} (only numbers, "*", "-", "/" and ",")`;
    }
    if (part.startsWith('*')) part = `${spec.low}-${spec.high}${part.slice(1)}`;
    const match = /^(\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part);
    if (!match) {
      return `${quote(original)} in the ${spec.label} field is not a number, a range like "1-5", a step like "*/15" or a list of those`;
    }
    const lower = Number(match[1]);
    const step = match[3] === undefined ? 1 : Number(match[3]);
    const upper =
      match[2] !== undefined
        ? Number(match[2])
        : match[3] !== undefined
          ? spec.high
          : lower;
    if (step === 0)
      return `the step in ${quote(original)} (${spec.label} field) is zero`;
    if (lower > upper)
      return `the range ${quote(original)} in the ${spec.label} field runs backwards`;
    if (lower < spec.low || upper > spec.high) {
      return `${quote(original)} is out of range for the ${spec.label} field (${spec.low}-${spec.high})`;
    }
    for (let value = lower; value <= upper; value += step) values.add(value);
  }
  if (spec.label === 'day-of-week' && values.delete(7)) values.add(0);
  return values;
}

/** Why an expression that `cron` accepts can never fire, or null. Mirrors `cron`'s day rule. */
function neverRunsReason(fields: CronFields): string | null {
  // `cron` matches a day when day-of-month OR day-of-week match, as soon as both are restricted; a restricted
  // day-of-week alone always meets some day. Only a restricted day-of-month with `*` weekdays can miss.
  if (fields.daysOfWeek.size !== 7 || fields.daysOfMonth.size === 31)
    return null;
  const days = [...fields.daysOfMonth].sort((a, b) => a - b);
  const months = [...fields.months].sort((a, b) => a - b);
  if (
    months.some((month) => days.some((day) => day <= MONTH_MAX_DAYS[month - 1]))
  )
    return null;
  return `there is no day ${joinList(days.map(String), 'or')} in ${joinList(
    months.map((month) => MONTH_LABELS[month - 1]),
    'and',
  )}`;
}

function joinList(items: string[], conjunction: string): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

/** Compiled expressions by zone and text: parsing and `CronTime` construction cost more than the lookups they serve. */
const compiledCache = new Map<string, Compiled>();
const COMPILED_CACHE_SIZE = 500;
/** Next-run lookups by zone, text, start and count: jobs sharing a schedule share the answer (`cron` needs 1–3 ms a step). */
const runsCache = new Map<string, Date[]>();
const RUNS_CACHE_SIZE = 2_000;

function remember<T>(
  cache: Map<string, T>,
  size: number,
  key: string,
  value: T,
): T {
  if (cache.size >= size) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

/** `compileUncached`, remembered: the answer depends only on the text and the zone. */
function compile(expression: unknown, timezone: string): Compiled {
  if (typeof expression !== 'string')
    return compileUncached(expression, timezone);
  const key = `${timezone}\u0000${expression}`;
  return (
    compiledCache.get(key) ??
    remember(
      compiledCache,
      COMPILED_CACHE_SIZE,
      key,
      compileUncached(expression, timezone),
    )
  );
}

/** Validates `expression` and builds its `CronTime` in `timezone`; every refusal has an owner-readable reason. */
function compileUncached(expression: unknown, timezone: string): Compiled {
  if (typeof expression !== 'string')
    return { ok: false, error: `The cron expression must be text. ${HELP}` };
  const trimmed = expression.trim();
  if (trimmed === '')
    return { ok: false, error: `The cron expression is empty. ${HELP}` };
  if (expression.length > CRON_EXPRESSION_MAX_LENGTH) {
    return {
      ok: false,
      error: `The cron expression is ${expression.length} characters long; at most ${CRON_EXPRESSION_MAX_LENGTH} are allowed. ${HELP}`,
    };
  }
  const preset = trimmed.startsWith('@')
    ? PRESETS[trimmed.toLowerCase()]
    : undefined;
  if (trimmed.startsWith('@') && preset === undefined) {
    return invalid(
      trimmed,
      `unknown preset (known: ${Object.keys(PRESETS).join(', ')})`,
    );
  }
  const parts = (preset ?? trimmed).split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return invalid(
      trimmed,
      `it has ${parts.length} field${parts.length === 1 ? '' : 's'}, but 5 are needed (or 6 with a leading seconds field)`,
    );
  }
  const texts = parts.length === 5 ? ['0', ...parts] : parts;
  const sets: Set<number>[] = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const parsed = parseField(texts[i], FIELDS[i]);
    if (typeof parsed === 'string') return invalid(trimmed, parsed);
    sets.push(parsed);
  }
  const fields: CronFields = {
    seconds: sets[0],
    secondsText: texts[0],
    daysOfMonth: sets[3],
    months: sets[4],
    daysOfWeek: sets[5],
  };
  if (!IANAZone.isValidZone(timezone)) {
    return {
      ok: false,
      error: `Invalid timezone ${quote(String(timezone))}: use an IANA zone name such as "Europe/Berlin".`,
    };
  }
  let cronTime: CronTime;
  try {
    cronTime = new CronTime(trimmed, timezone);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error))
      .split('\n')[0]
      .trim()
      .replace(/\.$/, '');
    return invalid(trimmed, reason.charAt(0).toLowerCase() + reason.slice(1));
  }
  if (fields.seconds.size > 1) {
    return {
      ok: false,
      error:
        `Cron expression ${quote(trimmed)} runs more often than once a minute (its seconds field ${quote(fields.secondsText)} ` +
        `fires ${fields.seconds.size} times in every matching minute). A job may run at most once a minute: ` +
        `use five fields, e.g. "* * * * *" for every minute or "*/5 * * * *" for every five minutes.`,
    };
  }
  const never = neverRunsReason(fields);
  if (never)
    return {
      ok: false,
      error: `Cron expression ${quote(trimmed)} never runs: ${never}.`,
    };
  return { ok: true, cronTime, fields };
}

/**
 * Up to `count` occurrences strictly after `after`. `cron` searches at most 8 years ahead of the real clock;
 * a search it gives up on ends the list. Each step costs `cron` about 1–3 ms.
 */
function collectRuns(
  cronTime: CronTime,
  timezone: string,
  after: Date,
  count: number,
): Date[] {
  const key = `${timezone}\u0000${cronTime.source.toString()}\u0000${after.getTime()}\u0000${count}`;
  const known = runsCache.get(key);
  if (known) return known.map((d) => new Date(d.getTime()));
  const runs = collectRunsUncached(cronTime, timezone, after, count);
  remember(
    runsCache,
    RUNS_CACHE_SIZE,
    key,
    runs.map((d) => new Date(d.getTime())),
  );
  return runs;
}

function collectRunsUncached(
  cronTime: CronTime,
  timezone: string,
  after: Date,
  count: number,
): Date[] {
  const runs: Date[] = [];
  let cursor = after;
  while (runs.length < count) {
    let next: Date;
    try {
      next = cronTime.getNextDateFrom(cursor, timezone).toJSDate();
    } catch {
      break;
    }
    // Defensive: never loop on a result that does not move forward.
    if (!(next.getTime() > cursor.getTime())) break;
    runs.push(next);
    cursor = next;
  }
  return runs;
}

/** A whole, non-negative count (NaN and negatives become 0). */
function wholeCount(count: number): number {
  return Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/**
 * Checks a cron expression as the owner (or the AI) wrote it, read in `timezone`: five fields
 * (`minute hour day-of-month month day-of-week`), six with a leading seconds field, or one of `cron`'s presets
 * (`@daily`, `@hourly`, `@weekly`, `@monthly`, `@yearly`, `@weekdays`, `@weekends`, `@minutely`).
 * Refuses, with a specific message: non-text, empty or longer than CRON_EXPRESSION_MAX_LENGTH; another field count;
 * anything `cron` cannot parse; schedules firing more often than once a minute; schedules that never fire
 * (`0 0 30 2 *`). Otherwise answers the next `count` occurrences strictly after `from`.
 */
export function checkCronExpression(
  expression: string,
  timezone: string,
  from: Date,
  count = 3,
): CronCheck {
  const compiled = compile(expression, timezone);
  if (!compiled.ok) return compiled;
  const trimmed = expression.trim();
  if (!isValidDate(from))
    return {
      ok: false,
      error:
        'Cannot compute the next runs: the start time is not a valid date.',
    };
  const wanted = wholeCount(count);
  const runs = collectRuns(
    compiled.cronTime,
    timezone,
    from,
    Math.max(wanted, 3),
  );
  if (runs.length === 0) {
    return {
      ok: false,
      error: `Cron expression ${quote(trimmed)} never runs: no run time was found in the next 8 years.`,
    };
  }
  for (let i = 1; i < runs.length; i++) {
    if (runs[i].getTime() - runs[i - 1].getTime() < 60_000) {
      return {
        ok: false,
        error: `Cron expression ${quote(trimmed)} runs more often than once a minute. A job may run at most once a minute: use five fields, e.g. "*/5 * * * *".`,
      };
    }
  }
  return { ok: true, nextRuns: runs.slice(0, wanted) };
}

/**
 * The next `count` occurrences of `expression` in `timezone` strictly after `after`; empty when the expression or
 * zone is refused by checkCronExpression's rules. Never throws.
 */
export function nextCronRuns(
  expression: string,
  timezone: string,
  after: Date,
  count: number,
): Date[] {
  const compiled = compile(expression, timezone);
  if (!compiled.ok || !isValidDate(after)) return [];
  return collectRuns(compiled.cronTime, timezone, after, wholeCount(count));
}

/**
 * How many occurrences fall in `(afterExclusive, untilInclusive]` (counting stops at `cap`) and the latest of them,
 * e.g. the runs missed while the app was down. `latest` is the true latest even when the count was capped.
 * Nothing (`{ count: 0, latest: null }`) for a refused expression or an empty interval. Never throws.
 */
export function cronOccurrencesBetween(
  expression: string,
  timezone: string,
  afterExclusive: Date,
  untilInclusive: Date,
  cap = 1000,
): { count: number; latest: Date | null } {
  const none = { count: 0, latest: null };
  const compiled = compile(expression, timezone);
  const limit = wholeCount(cap);
  if (
    !compiled.ok ||
    !isValidDate(afterExclusive) ||
    !isValidDate(untilInclusive) ||
    limit === 0
  )
    return none;
  const until = untilInclusive.getTime();
  if (until <= afterExclusive.getTime()) return none;
  const { cronTime } = compiled;
  let count = 0;
  let latest: Date | null = null;
  let cursor = afterExclusive;
  while (count < limit) {
    const [next] = collectRuns(cronTime, timezone, cursor, 1);
    if (!next || next.getTime() > until) return { count, latest };
    count++;
    latest = next;
    cursor = next;
  }
  return {
    count,
    latest:
      latestAtOrBefore(cronTime, timezone, cursor, untilInclusive) ?? latest,
  };
}

/**
 * The latest occurrence in `(after, until]`, found by looking back from `until` in windows that double
 * (one minute, two, four…), so a long interval costs a few dozen steps instead of one per occurrence.
 */
function latestAtOrBefore(
  cronTime: CronTime,
  timezone: string,
  after: Date,
  until: Date,
): Date | null {
  const end = until.getTime();
  for (let width = 60_000; ; width *= 2) {
    const start = Math.max(after.getTime(), end - width);
    const [first] = collectRuns(cronTime, timezone, new Date(start), 1);
    if (first && first.getTime() <= end) {
      let latest = first;
      for (;;) {
        const [next] = collectRuns(cronTime, timezone, latest, 1);
        if (!next || next.getTime() > end) return latest;
        latest = next;
      }
    }
    if (start === after.getTime()) return null;
  }
}

/**
 * The schedule in words ("At 08:00, Monday through Friday"), 24-hour clock; the expression itself when cronstrue
 * cannot read it. `cron`'s presets are spelled out first (cronstrue knows neither `@weekdays` nor `@weekends`).
 */
export function describeCron(expression: string): string {
  if (typeof expression !== 'string') return String(expression);
  const trimmed = expression.trim();
  const source = PRESETS[trimmed.toLowerCase()] ?? trimmed;
  try {
    return cronstrueToString(source, {
      use24HourTimeFormat: true,
      throwExceptionOnParseError: true,
    });
  } catch {
    return expression;
  }
}
