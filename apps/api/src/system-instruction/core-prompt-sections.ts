import { Injectable } from '@nestjs/common';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from './prompt-section';
import {
  OWNER_AND_UNATTENDED,
  PROMPT_AUDIENCES,
  type PromptAudience,
} from './prompt-audience';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Each zone's last text and the minute it shows: every turn in that minute reads the same text. */
const lastFormatted = new Map<string, { minute: number; text: string }>();

/**
 * Since 1972 every zone's offset is a whole number of minutes, so a UTC minute is one local
 * minute (before, some had seconds: Liberia's −0:44:30, Amsterdam's +0:19:32).
 */
const WHOLE_MINUTE_OFFSETS_SINCE = Date.UTC(1973, 0, 1);

/** "Saturday, 21 November 2026 at 14:05 (Europe/Paris, GMT+01:00)". Cached per zone and minute: this runs every turn. */
export function formatPromptDateTime(at: Date, timeZone: string): string {
  const ms = at.getTime();
  if (!(ms >= WHOLE_MINUTE_OFFSETS_SINCE)) return formatDateTime(at, timeZone);
  const minute = Math.floor(ms / 60_000);
  const last = lastFormatted.get(timeZone);
  if (last?.minute === minute) return last.text;
  const text = formatDateTime(at, timeZone);
  lastFormatted.set(timeZone, { minute, text });
  return text;
}

function formatDateTime(at: Date, timeZone: string): string {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    });
    formatters.set(timeZone, format);
  }
  const parts = Object.fromEntries(
    format.formatToParts(at).map((p) => [p.type, p.value]),
  );
  return `${parts['weekday']}, ${parts['day']} ${parts['month']} ${parts['year']} at ${parts['hour']}:${parts['minute']} (${timeZone}, ${parts['timeZoneName']})`;
}

@PromptSectionProvider()
@Injectable()
export class DateTimePromptSection implements PromptSection {
  readonly id = 'datetime';
  // Last: it changes every minute, and everything before it stays a byte-identical prefix that
  // provider prompt caching can reuse from one turn to the next.
  readonly order = 1000;
  // Harmless to anyone, and an answer needs today's date.
  readonly audiences = PROMPT_AUDIENCES;
  render({ now, timezone }: PromptContext): string {
    return `## Current Date & Time\n${formatPromptDateTime(now, timezone)}`;
  }
}

@PromptSectionProvider()
@Injectable()
export class MemoryPromptSection implements PromptSection {
  readonly id = 'memory';
  readonly order = 20;
  // A trusted contact's reply may draw on what the assistant remembers; an untrusted one may not.
  readonly audiences: readonly PromptAudience[] = [
    ...OWNER_AND_UNATTENDED,
    'trusted-contact',
  ];
  render({ instruction }: PromptContext): string {
    return `## Your Memory\n${instruction.memory.trim() || 'No memories stored yet.'}`;
  }
}

@PromptSectionProvider()
@Injectable()
export class DatabasePromptSection implements PromptSection {
  readonly id = 'database';
  readonly order = 30;
  // The schema is what db_query needs; other modes do without it.
  readonly modes = ['data'];
  readonly audiences = OWNER_AND_UNATTENDED;
  render({ instruction }: PromptContext): string {
    const schema =
      instruction.dbSchema.trim() ||
      'No collections documented yet. When you create an ai_ collection, document it with update_db_schema.';
    return `## Your Database\n${schema}`;
  }
}
