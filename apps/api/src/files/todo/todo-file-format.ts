import type { TodoItem } from '@metatronos/shared-types';

/**
 * TODO.md and TODO.DONE.md, the seed's Markdown files: a small front matter
 * (`created_at`, `updated_at`, `open_count` / `done_count`), a heading, and one
 * line per item with its metadata as Markdown link tuples before a `|`:
 *
 *   - [ ] [Created](2026-02-09 10:00), [ChatID](wa:14155551234) | Call the plumber
 *   - [x] [Created](2026-02-09 10:00), [Done](2026-02-09 10:30) | Call the plumber
 *
 * Lines the owner wrote by hand (`- [ ] buy milk`, notes) are kept as they are.
 */

export const TODO_OPEN_FILE = 'TODO.md';
export const TODO_DONE_FILE = 'TODO.DONE.md';
const OPEN_HEADING = '# TODO (open)';
const DONE_HEADING = '# TODO (done)';

/** `YYYY-MM-DD HH:mm`, the seed's timestamp. */
export const TODO_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;
/** A chat reference: `wa:<digits>` or `tg:<signed id>`. */
export const TODO_CHAT_ID = /^(wa:\d{5,20}|tg:-?[1-9]\d{0,19})$/;

export interface TodoFile {
  createdAt: string;
  updatedAt: string;
  items: TodoItem[];
  /** Lines that are not items (hand-written notes), kept below the items. */
  other: string[];
}

const TUPLE = /^\[([A-Za-z]+)\]\(([^()]*)\)$/;

/** Reads one file's text; anything unreadable as an item stays in `other`. */
export function parseTodoFile(raw: string, done: boolean): TodoFile {
  const lines = raw.replace(/\r\n?/g, '\n').split('\n');
  const file: TodoFile = { createdAt: '', updatedAt: '', items: [], other: [] };
  let start = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^(created_at|updated_at):\s*"?([^"]*)"?\s*$/.exec(line);
        if (m && m[1] === 'created_at') file.createdAt = m[2].trim();
        if (m && m[1] === 'updated_at') file.updatedAt = m[2].trim();
      }
      start = end + 1;
    }
  }
  for (const rawLine of lines.slice(start)) {
    const line = rawLine.trim();
    if (line === '' || line === OPEN_HEADING || line === DONE_HEADING) continue;
    const item = parseTodoLine(line, done);
    if (item) file.items.push(item);
    else file.other.push(rawLine.trimEnd());
  }
  return file;
}

/** One item line, or null when the line is not an item of this file. */
export function parseTodoLine(line: string, done: boolean): TodoItem | null {
  const box = done ? /^- \[[xX]\] (.+)$/ : /^- \[ \] (.+)$/;
  const m = box.exec(line.trim());
  if (!m) return null;
  const rest = m[1].trim();
  const bar = rest.indexOf(' | ');
  const meta = bar >= 0 ? parseMetadata(rest.slice(0, bar)) : null;
  // A hand-written item without metadata: the whole rest is its text.
  if (!meta) return rest ? { content: rest, createdAt: '' } : null;
  const content = rest.slice(bar + 3).trim();
  if (!content) return null;
  const item: TodoItem = { content, createdAt: meta['Created'] ?? '' };
  if (meta['Done']) item.doneAt = meta['Done'];
  if (meta['ChatID']) item.chatId = meta['ChatID'];
  if (meta['People'])
    item.people = meta['People']
      .split(';')
      .map((p) => p.trim())
      .filter(Boolean);
  return item;
}

function parseMetadata(raw: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    const m = TUPLE.exec(part.trim());
    if (!m || m[1] in out) return null;
    out[m[1]] = m[2].trim();
  }
  return 'Created' in out ? out : null;
}

/** A value inside `[Key](value)`: no brackets, commas or line breaks that would break the line. */
function metaValue(value: string): string {
  return value.replace(/[()[\],|\r\n]+/g, ' ').trim();
}

export function renderTodoLine(item: TodoItem, done: boolean): string {
  const meta = [`[Created](${metaValue(item.createdAt)})`];
  if (done && item.doneAt) meta.push(`[Done](${metaValue(item.doneAt)})`);
  if (item.chatId) meta.push(`[ChatID](${metaValue(item.chatId)})`);
  if (item.people?.length)
    meta.push(
      `[People](${item.people.map((p) => metaValue(p).replace(/;/g, ' ')).join('; ')})`,
    );
  const content = oneLine(item.content);
  return `- [${done ? 'x' : ' '}] ${meta.join(', ')} | ${content}`;
}

export function renderTodoFile(file: TodoFile, done: boolean): string {
  const count = done ? 'done_count' : 'open_count';
  const lines = [
    '---',
    `created_at: "${file.createdAt}"`,
    `updated_at: "${file.updatedAt}"`,
    `${count}: ${file.items.length}`,
    '---',
    '',
    done ? DONE_HEADING : OPEN_HEADING,
    '',
    ...file.items.map((item) =>
      // A hand-written item keeps its form until it is completed.
      item.createdAt
        ? renderTodoLine(item, done)
        : `- [${done ? 'x' : ' '}] ${oneLine(item.content)}`,
    ),
  ];
  if (file.other.length) lines.push('', ...file.other);
  return `${lines.join('\n')}\n`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Lower case, accents and punctuation gone, whitespace collapsed: what text matching compares. */
export function normaliseForMatch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * The open items a `complete` query names, by text alone: an item whose text
 * equals the query wins outright; otherwise every item that contains the query,
 * or contains all of its words, is a candidate.
 */
export function matchTodoItems(query: string, items: TodoItem[]): number[] {
  const q = normaliseForMatch(query);
  if (!q) return [];
  const normalised = items.map((item) => normaliseForMatch(item.content));
  const exact = normalised.flatMap((text, i) => (text === q ? [i] : []));
  if (exact.length) return exact;
  const words = q.split(' ');
  return normalised.flatMap((text, i) => {
    if (` ${text} `.includes(` ${q} `) || text.includes(q)) return [i];
    const have = new Set(text.split(' '));
    return words.every((w) => have.has(w)) ? [i] : [];
  });
}
