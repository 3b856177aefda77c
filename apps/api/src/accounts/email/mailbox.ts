import type {
  FetchMessageObject,
  ImapFlow,
  MessageAddressObject,
  SearchObject,
} from 'imapflow';
import { convert } from 'html-to-text';
// Loaded at the first message read (with libmime's charset tables, about 0.1 s of start-up).
import type { AddressObject, ParsedMail } from 'mailparser';
import { withoutPasswords, type EmailAccountRecord } from '../account-records';
import { describeMailError } from '../connections/mail-connection';

/** The most characters of a message body a tool result carries. */
export const MAX_BODY_CHARS = 20_000;

/**
 * The most bytes of a message fetched to read it. Bodies come before attachments in
 * the MIME order mail clients write, so a big attachment is cut, not the text.
 */
export const MAX_SOURCE_BYTES = 8 * 1024 * 1024;

/** A message as search lists it: headers only. */
export interface EmailSummary {
  uid: number;
  messageId: string | null;
  from: string;
  to: string[];
  subject: string;
  date: string | null;
  flags: string[];
}

export interface EmailAttachmentSummary {
  filename: string | null;
  contentType: string;
  size: number;
}

/** One message as read_message shows it: its body as plain text, capped. */
export interface EmailMessage extends EmailSummary {
  cc: string[];
  replyTo: string[];
  text: string;
  truncated: boolean;
  attachments: EmailAttachmentSummary[];
}

export interface EmailSearch {
  text?: string;
  from?: string;
  since?: Date;
  before?: Date;
  unseenOnly: boolean;
  limit: number;
}

/** What a reply needs of the message it answers. */
export interface ReplyBasis {
  messageId: string | null;
  references: string[];
  subject: string;
  from: string[];
  replyTo: string[];
  to: string[];
  cc: string[];
}

/** A problem the model can act on (unknown folder or UID): its text is shown as is. */
export class MailboxProblem extends Error {}

interface ImapCommandErrorLike {
  code?: string;
  responseText?: string;
  message?: string;
}

/**
 * A failure after login: the server's own words for a refused command; a
 * dropped or silent connection as the connection helpers describe it.
 */
export function commandError(
  account: EmailAccountRecord,
  error: unknown,
): string {
  const e = (error ?? {}) as ImapCommandErrorLike;
  const where = `${account.imap.host}:${account.imap.port}`;
  if (e.responseText)
    return `The IMAP server ${where} refused this: ${withoutPasswords(e.responseText, account)}`;
  if (e.code && /^E[A-Z]+$|TIMEOUT/.test(e.code))
    return describeMailError('IMAP', account.imap, error);
  return `The IMAP server ${where} could not do this: ${withoutPasswords(e.message ?? 'unknown error', account)}`;
}

/** "Ann <ann@example.test>" or the bare address. */
function formatAddress(a: { name?: string; address?: string }): string {
  const address = a.address ?? '';
  return a.name && a.name !== address ? `${a.name} <${address}>` : address;
}

function envelopeAddresses(list: MessageAddressObject[] | undefined): string[] {
  return (list ?? []).map(formatAddress).filter(Boolean);
}

/** The bare addresses of a parsed header (groups flattened). */
export function parsedAddresses(
  header: AddressObject | AddressObject[] | undefined,
): string[] {
  const objects =
    header === undefined ? [] : ([] as AddressObject[]).concat(header);
  const out: string[] = [];
  const walk = (entries: AddressObject['value']) => {
    for (const entry of entries) {
      if (entry.group) walk(entry.group);
      else if (entry.address) out.push(entry.address);
    }
  };
  for (const object of objects) walk(object.value);
  return out;
}

function parsedDisplay(
  header: AddressObject | AddressObject[] | undefined,
): string[] {
  const objects =
    header === undefined ? [] : ([] as AddressObject[]).concat(header);
  return objects.flatMap((o) =>
    o.value.filter((v) => v.address).map((v) => formatAddress(v)),
  );
}

function isoDate(value: Date | string | undefined): string | null {
  if (value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function summaryOf(message: FetchMessageObject): EmailSummary {
  const envelope = message.envelope ?? {};
  return {
    uid: message.uid,
    messageId: envelope.messageId ?? null,
    from: envelopeAddresses(envelope.from).join(', '),
    to: envelopeAddresses(envelope.to),
    subject: envelope.subject ?? '',
    date: isoDate(envelope.date),
    flags: [...(message.flags ?? [])],
  };
}

/** The body as plain text: the sender's own text part, else the HTML part converted. */
function bodyText(parsed: ParsedMail): string {
  if (parsed.text?.trim()) return parsed.text.trim();
  if (typeof parsed.html === 'string' && parsed.html.trim())
    return convert(parsed.html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    }).trim();
  return '';
}

function referencesOf(parsed: ParsedMail): string[] {
  const refs = parsed.references;
  if (!refs) return [];
  return (Array.isArray(refs) ? refs : refs.split(/\s+/)).filter(Boolean);
}

/**
 * One logged-in IMAP connection of an account, lent to one tool call at a time by the ImapPool
 * (which turns failures into the owner's words and closes the connection when the turn is stopped).
 */
export class Mailbox {
  constructor(private readonly client: ImapFlow) {}

  /** The mailbox's folder paths. */
  async folders(): Promise<string[]> {
    return (await this.client.list()).map((f) => f.path);
  }

  private async requireFolder(folder: string): Promise<string> {
    const folders = await this.folders();
    const match =
      folders.find((f) => f === folder) ??
      folders.find((f) => f.toLowerCase() === folder.toLowerCase());
    if (!match)
      throw new MailboxProblem(
        `No folder '${folder}' in this mailbox. Folders: ${folders.join(', ')}`,
      );
    return match;
  }

  /** Runs `work` with `folder` selected (read-only unless `write`). */
  private async inFolder<T>(
    folder: string,
    write: boolean,
    work: () => Promise<T>,
  ): Promise<T> {
    const path = await this.requireFolder(folder);
    const lock = await this.client.getMailboxLock(path, { readOnly: !write });
    try {
      return await work();
    } finally {
      lock.release();
    }
  }

  /** Newest first (by UID), at most `limit`; `total` counts every match. */
  async search(
    folder: string,
    query: EmailSearch,
  ): Promise<{ total: number; messages: EmailSummary[] }> {
    return this.inFolder(folder, false, async () => {
      const criteria: SearchObject = {};
      if (query.text) criteria.text = query.text;
      // HEADER From: a substring match on every server; GreenMail's FROM only matches whole addresses.
      if (query.from) criteria.header = { from: query.from };
      // The Date header: the date the owner sees in every mail client.
      if (query.since) criteria.sentSince = query.since;
      if (query.before) criteria.sentBefore = query.before;
      if (query.unseenOnly) criteria.seen = false;
      if (Object.keys(criteria).length === 0) criteria.all = true;
      const found = await this.client.search(criteria, { uid: true });
      const uids = Array.isArray(found) ? [...found].sort((a, b) => b - a) : [];
      const newest = uids.slice(0, query.limit);
      if (newest.length === 0) return { total: uids.length, messages: [] };
      const messages = await this.client.fetchAll(
        newest.join(','),
        { uid: true, envelope: true, flags: true },
        { uid: true },
      );
      return {
        total: uids.length,
        messages: messages.map(summaryOf).sort((a, b) => b.uid - a.uid),
      };
    });
  }

  private async parsedMessage(
    folder: string,
    uid: number,
  ): Promise<{ parsed: ParsedMail; flags: string[]; cut: boolean }> {
    const message = await this.client.fetchOne(
      String(uid),
      {
        uid: true,
        size: true,
        flags: true,
        source: { maxLength: MAX_SOURCE_BYTES },
      },
      { uid: true },
    );
    if (!message || !message.source)
      throw new MailboxProblem(
        `No message with uid ${uid} in folder '${folder}'`,
      );
    const cut = (message.size ?? 0) > MAX_SOURCE_BYTES;
    // skipHtmlToText: an HTML-only body is converted below, with our options.
    const { simpleParser } = await import('mailparser');
    const parsed = await simpleParser(message.source, {
      skipHtmlToText: true,
      skipImageLinks: true,
      skipTextToHtml: true,
    });
    return { parsed, flags: [...(message.flags ?? [])], cut };
  }

  async read(folder: string, uid: number): Promise<EmailMessage> {
    return this.inFolder(folder, false, async () => {
      const { parsed, flags, cut } = await this.parsedMessage(folder, uid);
      const text = bodyText(parsed);
      return {
        uid,
        messageId: parsed.messageId ?? null,
        from: parsedDisplay(parsed.from).join(', '),
        to: parsedDisplay(parsed.to),
        cc: parsedDisplay(parsed.cc),
        replyTo: parsedDisplay(parsed.replyTo),
        subject: parsed.subject ?? '',
        date: isoDate(parsed.date),
        flags,
        text: text.slice(0, MAX_BODY_CHARS),
        truncated: cut || text.length > MAX_BODY_CHARS,
        attachments: parsed.attachments.map((a) => ({
          filename: a.filename ?? null,
          contentType: a.contentType,
          size: a.size,
        })),
      };
    });
  }

  async replyBasis(folder: string, uid: number): Promise<ReplyBasis> {
    return this.inFolder(folder, false, async () => {
      const { parsed } = await this.parsedMessage(folder, uid);
      return {
        messageId: parsed.messageId ?? null,
        references: referencesOf(parsed),
        subject: parsed.subject ?? '',
        from: parsedAddresses(parsed.from),
        replyTo: parsedAddresses(parsed.replyTo),
        to: parsedAddresses(parsed.to),
        cc: parsedAddresses(parsed.cc),
      };
    });
  }

  /** Refuses UIDs that are not in the selected folder (IMAP would skip them silently). */
  private async requireUids(folder: string, uids: number[]): Promise<void> {
    const found = await this.client.search(
      { uid: uids.join(',') },
      { uid: true },
    );
    const present = new Set(Array.isArray(found) ? found : []);
    const missing = uids.filter((u) => !present.has(u));
    if (missing.length)
      throw new MailboxProblem(
        `No message with uid ${missing.join(', ')} in folder '${folder}'`,
      );
  }

  /** Moves the messages; answers their UIDs in the target folder where the server says. */
  async move(
    folder: string,
    uids: number[],
    target: string,
  ): Promise<Record<string, number>> {
    const targetPath = await this.requireFolder(target);
    return this.inFolder(folder, true, async () => {
      await this.requireUids(folder, uids);
      const moved = await this.client.messageMove(uids.join(','), targetPath, {
        uid: true,
      });
      if (!moved)
        throw new MailboxProblem(
          `The server did not move the messages to '${targetPath}'`,
        );
      return Object.fromEntries(
        [...(moved.uidMap ?? new Map<number, number>())].map(([from, to]) => [
          String(from),
          to,
        ]),
      );
    });
  }

  /** Sets or clears \Seen and \Flagged; answers each message's flags afterwards. */
  async mark(
    folder: string,
    uids: number[],
    change: { seen?: boolean; flagged?: boolean },
  ): Promise<Array<{ uid: number; flags: string[] }>> {
    return this.inFolder(folder, true, async () => {
      await this.requireUids(folder, uids);
      const range = uids.join(',');
      const add: string[] = [];
      const remove: string[] = [];
      if (change.seen !== undefined)
        (change.seen ? add : remove).push('\\Seen');
      if (change.flagged !== undefined)
        (change.flagged ? add : remove).push('\\Flagged');
      if (add.length)
        await this.client.messageFlagsAdd(range, add, { uid: true });
      if (remove.length)
        await this.client.messageFlagsRemove(range, remove, { uid: true });
      const after = await this.client.fetchAll(
        range,
        { uid: true, flags: true },
        { uid: true },
      );
      return after
        .map((m) => ({ uid: m.uid, flags: [...(m.flags ?? [])] }))
        .sort((a, b) => a.uid - b.uid);
    });
  }
}
