import type {
  FetchMessageObject,
  ImapFlow,
  MessageAddressObject,
  SearchObject,
} from 'imapflow';
// Loaded at the first message read (with libmime's charset tables, about 0.1 s of start-up).
import type { AddressObject, ParsedMail } from 'mailparser';
import { withoutPasswords, type EmailAccountRecord } from '../account-records';
import { describeMailError } from '../connections/mail-connection';
import type {
  AccountMailCache,
  CachedBody,
  CachedEnvelope,
  SessionFlags,
  SessionSearches,
} from './mail-cache';

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
async function bodyText(parsed: ParsedMail): Promise<string> {
  if (parsed.text?.trim()) return parsed.text.trim();
  if (typeof parsed.html === 'string' && parsed.html.trim())
    // Loaded with the first HTML-only mail: html-to-text costs start-up time otherwise.
    return (await import('html-to-text'))
      .convert(parsed.html, {
        wordwrap: false,
        selectors: [
          { selector: 'img', format: 'skip' },
          { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
        ],
      })
      .trim();
  return '';
}

function referencesOf(parsed: ParsedMail): string[] {
  const refs = parsed.references;
  if (!refs) return [];
  return (Array.isArray(refs) ? refs : refs.split(/\s+/)).filter(Boolean);
}

/** The selected folder of a call: its path and UIDVALIDITY, which make a UID a message's key. */
interface Selected {
  path: string;
  uidValidity: string;
}

/** A summary with its keys in the order results have always listed them. */
function summary(envelope: CachedEnvelope, flags: string[]): EmailSummary {
  const { uid, messageId, from, to, subject, date } = envelope;
  return { uid, messageId, from, to, subject, date, flags };
}

/**
 * One logged-in IMAP connection of an account, lent to one tool call at a time by the ImapPool
 * (which turns failures into the owner's words and closes the connection when the turn is stopped).
 * What does not change is taken from the account's cache: the folder list (briefly), envelopes and
 * parsed bodies by (folder, UIDVALIDITY, UID). Every call still asks the server which messages
 * exist (a SEARCH), so new, moved and deleted mail shows at once; flags come from this connection's
 * SessionFlags, which the server keeps current while the folder stays selected, or are fetched.
 */
export class Mailbox {
  constructor(
    private readonly client: ImapFlow,
    private readonly cache: AccountMailCache,
    private readonly flags: SessionFlags,
    private readonly searches: SessionSearches,
  ) {}

  /** The mailbox's folder paths (`fresh`: asked of the server, not the cache). */
  async folders(fresh = false): Promise<string[]> {
    const cached = fresh ? null : this.cache.folders();
    if (cached) return cached;
    const paths = (await this.client.list()).map((f) => f.path);
    this.cache.setFolders(paths);
    return paths;
  }

  private async requireFolder(folder: string): Promise<string> {
    const find = (folders: string[]) =>
      folders.find((f) => f === folder) ??
      folders.find((f) => f.toLowerCase() === folder.toLowerCase());
    const cached = this.cache.folders();
    const match = cached && find(cached);
    if (match) return match;
    // Not in a kept list: it may have been made since.
    const folders = await this.folders(true);
    const found = find(folders);
    if (!found)
      throw new MailboxProblem(
        `No folder '${folder}' in this mailbox. Folders: ${folders.join(', ')}`,
      );
    return found;
  }

  /** Runs `work` with `folder` selected (read-only unless `write`). */
  private async inFolder<T>(
    folder: string,
    write: boolean,
    work: (selected: Selected) => Promise<T>,
  ): Promise<T> {
    const path = await this.requireFolder(folder);
    const open = this.client.mailbox;
    // A folder this connection has open read-write serves reads too: no new selection (which
    // would cost a command and the connection's known flags) between a mark and a search.
    const readOnly = !write && !(open && open.path === path && !open.readOnly);
    let lock: Awaited<ReturnType<ImapFlow['getMailboxLock']>>;
    try {
      lock = await this.client.getMailboxLock(path, { readOnly });
    } catch (error) {
      // A kept folder list can name a folder deleted since: say so as a fresh list would.
      if ((error as { mailboxMissing?: boolean }).mailboxMissing) {
        this.cache.forgetFolders();
        await this.requireFolder(folder);
      }
      throw error;
    }
    try {
      const mailbox = this.client.mailbox;
      const uidValidity = String((mailbox && mailbox.uidValidity) ?? '');
      this.cache.selected(path, uidValidity);
      return await work({ path, uidValidity });
    } finally {
      lock.release();
    }
  }

  /** Newest first (by UID), at most `limit`; `total` counts every match. */
  async search(
    folder: string,
    query: EmailSearch,
  ): Promise<{ total: number; messages: EmailSummary[] }> {
    return this.inFolder(folder, false, async (selected) => {
      const criteria: SearchObject = {};
      if (query.text) criteria.text = query.text;
      // HEADER From: a substring match on every server; GreenMail's FROM only matches whole addresses.
      if (query.from) criteria.header = { from: query.from };
      // The Date header: the date the owner sees in every mail client.
      if (query.since) criteria.sentSince = query.since;
      if (query.before) criteria.sentBefore = query.before;
      if (query.unseenOnly) criteria.seen = false;
      if (Object.keys(criteria).length === 0) criteria.all = true;
      const uids = await this.matching(selected.path, criteria);
      const newest = uids.slice(0, query.limit);
      const listed = new Map<number, EmailSummary>();
      const missing: number[] = [];
      for (const uid of newest) {
        const envelope = this.cache.envelope({ ...selected, uid });
        const flags = this.flags.get(selected.path, uid);
        if (envelope && flags) listed.set(uid, summary(envelope, flags));
        else missing.push(uid);
      }
      if (missing.length) {
        // Only the page shown, and only what it shows: envelope and flags.
        const fetched = await this.client.fetchAll(
          missing.join(','),
          { uid: true, envelope: true, flags: true },
          { uid: true },
        );
        for (const message of fetched) {
          const { flags, ...envelope } = summaryOf(message);
          this.cache.setEnvelope({ ...selected, uid: message.uid }, envelope);
          this.flags.remember(selected.path, message.uid, flags);
          listed.set(message.uid, summary(envelope, flags));
        }
      }
      return {
        total: uids.length,
        messages: newest.flatMap((uid) => listed.get(uid) ?? []),
      };
    });
  }

  /**
   * The UIDs matching, newest first. A search that does not depend on flags is answered from this
   * connection's SessionSearches after a NOOP has brought any news of messages come or gone.
   */
  private async matching(
    path: string,
    criteria: SearchObject,
  ): Promise<number[]> {
    const key = criteria.seen === undefined ? JSON.stringify(criteria) : null;
    if (key !== null && this.searches.get(path, key)) {
      await this.client.noop();
      const known = this.searches.get(path, key);
      if (known) return known;
    }
    const found = await this.client.search(criteria, { uid: true });
    const uids = Array.isArray(found) ? [...found].sort((a, b) => b - a) : [];
    if (key !== null) this.searches.remember(path, key, uids);
    return uids;
  }

  /** The message parsed, from the cache or fetched (its flags remembered on the way). */
  private async parsedMessage(
    folder: string,
    selected: Selected,
    uid: number,
  ): Promise<{ body: CachedBody; flags: string[] | null }> {
    const key = { ...selected, uid };
    const cached = this.cache.body(key);
    if (cached) return { body: cached, flags: null };
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
    const text = await bodyText(parsed);
    const body: CachedBody = {
      message: {
        uid,
        messageId: parsed.messageId ?? null,
        from: parsedDisplay(parsed.from).join(', '),
        to: parsedDisplay(parsed.to),
        cc: parsedDisplay(parsed.cc),
        replyTo: parsedDisplay(parsed.replyTo),
        subject: parsed.subject ?? '',
        date: isoDate(parsed.date),
        text: text.slice(0, MAX_BODY_CHARS),
        truncated: cut || text.length > MAX_BODY_CHARS,
        attachments: parsed.attachments.map((a) => ({
          filename: a.filename ?? null,
          contentType: a.contentType,
          size: a.size,
        })),
      },
      basis: {
        messageId: parsed.messageId ?? null,
        references: referencesOf(parsed),
        subject: parsed.subject ?? '',
        from: parsedAddresses(parsed.from),
        replyTo: parsedAddresses(parsed.replyTo),
        to: parsedAddresses(parsed.to),
        cc: parsedAddresses(parsed.cc),
      },
    };
    this.cache.setBody(key, body);
    const flags = [...(message.flags ?? [])];
    this.flags.remember(selected.path, uid, flags);
    return { body, flags };
  }

  /**
   * The message's flags now; refuses a UID no longer in the folder. A SEARCH for the UID both
   * checks that and brings the server's pending flag news; a FETCH of its flags where none are known.
   */
  private async currentFlags(
    folder: string,
    selected: Selected,
    uid: number,
  ): Promise<string[]> {
    if (this.flags.get(selected.path, uid)) {
      await this.requireUids(folder, [uid]);
      const known = this.flags.get(selected.path, uid);
      if (known) return known;
    }
    const message = await this.client.fetchOne(
      String(uid),
      { uid: true, flags: true },
      { uid: true },
    );
    if (!message)
      throw new MailboxProblem(
        `No message with uid ${uid} in folder '${folder}'`,
      );
    const flags = [...(message.flags ?? [])];
    this.flags.remember(selected.path, uid, flags);
    return flags;
  }

  async read(folder: string, uid: number): Promise<EmailMessage> {
    return this.inFolder(folder, false, async (selected) => {
      const parsed = await this.parsedMessage(folder, selected, uid);
      const flags =
        parsed.flags ?? (await this.currentFlags(folder, selected, uid));
      const { messageId, from, to, cc, replyTo, subject, date } =
        parsed.body.message;
      const { text, truncated, attachments } = parsed.body.message;
      return {
        uid,
        messageId,
        from,
        to,
        cc,
        replyTo,
        subject,
        date,
        flags,
        text,
        truncated,
        attachments,
      };
    });
  }

  async replyBasis(folder: string, uid: number): Promise<ReplyBasis> {
    return this.inFolder(folder, false, async (selected) => {
      const parsed = await this.parsedMessage(folder, selected, uid);
      // From the cache: the message may have been deleted or moved since.
      if (!parsed.flags) await this.requireUids(folder, [uid]);
      return parsed.body.basis;
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
    return this.inFolder(folder, true, async (selected) => {
      await this.requireUids(folder, uids);
      const moved = await this.client
        .messageMove(uids.join(','), targetPath, { uid: true })
        .catch((error: unknown) => {
          // The kept folder list may name a target deleted since.
          this.cache.forgetFolders();
          throw error;
        });
      this.cache.forget(uids.map((uid) => ({ ...selected, uid })));
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
    return this.inFolder(folder, true, async (selected) => {
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
      for (const m of after)
        this.flags.remember(selected.path, m.uid, [...(m.flags ?? [])]);
      return after
        .map((m) => ({ uid: m.uid, flags: [...(m.flags ?? [])] }))
        .sort((a, b) => a.uid - b.uid);
    });
  }
}
