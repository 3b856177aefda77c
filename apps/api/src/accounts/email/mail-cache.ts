import type { ImapFlow, MailboxObject } from 'imapflow';
import type { EmailMessage, EmailSummary, ReplyBasis } from './mailbox';

/** How long one account's folder list is trusted (a folder missing from it is looked up again at once). */
export const FOLDER_LIST_TTL_MS = 60_000;
/** Bounds of one account's caches (entries, and characters of their JSON). */
export const ENVELOPE_CACHE_ENTRIES = 2_000;
export const ENVELOPE_CACHE_CHARS = 1_000_000;
export const BODY_CACHE_ENTRIES = 50;
export const BODY_CACHE_CHARS = 1_500_000;
/** Flags one connection remembers for its selected folder; beyond this it starts again. */
export const SESSION_FLAGS_MAX = 10_000;
/** Search results one connection remembers for its selected folder (the last ones asked). */
export const SESSION_SEARCHES_MAX = 20;

/** A Map in least-recently-used order, bounded by a count and a total weight. */
export class BoundedLru<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get weight(): number {
    return this.total;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    while (this.entries.size > this.maxEntries || this.total > this.maxWeight)
      this.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }

  deleteWhere(test: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) if (test(key)) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}

/** What a message's envelope says (immutable for a UID); its flags are not cached with it. */
export type CachedEnvelope = Omit<EmailSummary, 'flags'>;

/** A parsed message (immutable for a UID): what read shows, without flags, and what a reply needs. */
export interface CachedBody {
  message: Omit<EmailMessage, 'flags'>;
  basis: ReplyBasis;
}

/** A message's place: a UID means the same message only within one folder and UIDVALIDITY. */
export interface MessageKey {
  path: string;
  uidValidity: string;
  uid: number;
}

const keyOf = ({ path, uidValidity, uid }: MessageKey) =>
  `${path}\u0000${uidValidity}\u0000${uid}`;

/**
 * What one account's mailbox says that does not change: IMAP gives a message's content to a
 * (folder, UIDVALIDITY, UID) for good, so envelopes and parsed bodies are kept by that key; a
 * folder seen with another UIDVALIDITY drops its entries. Flags change, so they are not here (see
 * SessionFlags). The folder list is kept briefly. Owned by the account's ImapPool entry: never
 * shared between accounts, dropped when the account is edited or deleted, when its last connection
 * closes and at shutdown.
 */
export class AccountMailCache {
  private folderList: { paths: string[]; at: number } | null = null;
  private readonly validity = new Map<string, string>();
  private readonly envelopes = new BoundedLru<CachedEnvelope>(
    ENVELOPE_CACHE_ENTRIES,
    ENVELOPE_CACHE_CHARS,
    (envelope) => JSON.stringify(envelope).length,
  );
  private readonly bodies = new BoundedLru<CachedBody>(
    BODY_CACHE_ENTRIES,
    BODY_CACHE_CHARS,
    (body) => JSON.stringify(body).length,
  );

  constructor(private readonly now: () => number = Date.now) {}

  folders(): string[] | null {
    const list = this.folderList;
    return list && this.now() - list.at < FOLDER_LIST_TTL_MS
      ? list.paths
      : null;
  }

  setFolders(paths: string[]): void {
    this.folderList = { paths, at: this.now() };
  }

  forgetFolders(): void {
    this.folderList = null;
  }

  /** Told at each selection: messages cached under another UIDVALIDITY of the folder are gone. */
  selected(path: string, uidValidity: string): void {
    const before = this.validity.get(path);
    if (before === uidValidity) return;
    this.validity.set(path, uidValidity);
    if (before === undefined) return;
    const prefix = `${path}\u0000`;
    const inFolder = (key: string) => key.startsWith(prefix);
    this.envelopes.deleteWhere(inFolder);
    this.bodies.deleteWhere(inFolder);
  }

  envelope(key: MessageKey): CachedEnvelope | undefined {
    return this.envelopes.get(keyOf(key));
  }

  setEnvelope(key: MessageKey, envelope: CachedEnvelope): void {
    this.envelopes.set(keyOf(key), envelope);
  }

  body(key: MessageKey): CachedBody | undefined {
    return this.bodies.get(keyOf(key));
  }

  setBody(key: MessageKey, body: CachedBody): void {
    this.bodies.set(keyOf(key), body);
  }

  /** Messages that left the folder (moved): their UIDs will not come back there. */
  forget(keys: MessageKey[]): void {
    for (const key of keys) {
      this.envelopes.delete(keyOf(key));
      this.bodies.delete(keyOf(key));
    }
  }

  /** Entries and characters held (for tests and the bench). */
  usage(): { envelopes: number; bodies: number; chars: number } {
    return {
      envelopes: this.envelopes.size,
      bodies: this.bodies.size,
      chars: this.envelopes.weight + this.bodies.weight,
    };
  }

  clear(): void {
    this.folderList = null;
    this.validity.clear();
    this.envelopes.clear();
    this.bodies.clear();
  }
}

interface FlagsEvent {
  path: string;
  uid?: number;
  flags: Set<string>;
}

/**
 * The flags of messages in the folder one connection has selected, as that connection last heard
 * them. They stay current while that selection lasts: a server tells a session that has a folder
 * selected about flag changes made elsewhere, as an untagged FETCH with the next command's answer
 * (RFC 3501 §5.2, §7.4.2), which imapflow emits as `flags` before the command resolves. An update
 * without a UID cannot be placed (sequence numbers are not tracked), so it forgets them all. Any
 * new SELECT/EXAMINE (imapflow makes a new mailbox object for each, even of the same folder, and
 * drops it when the connection closes) starts again: updates pending for the old one are lost.
 */
export class SessionFlags {
  private selection: MailboxObject | null = null;
  private readonly known = new Map<number, string[]>();

  constructor(private readonly client: ImapFlow) {
    client.on('flags', (event: FlagsEvent) => {
      if (!this.current(event.path)) return;
      if (event.uid) this.known.set(event.uid, [...event.flags]);
      else this.known.clear();
    });
  }

  get(path: string, uid: number): string[] | undefined {
    if (!this.current(path)) return undefined;
    const flags = this.known.get(uid);
    return flags && [...flags];
  }

  remember(path: string, uid: number, flags: string[]): void {
    if (!this.current(path)) return;
    if (this.known.size >= SESSION_FLAGS_MAX) this.known.clear();
    this.known.set(uid, [...flags]);
  }

  /** Whether `path` is selected now, in the selection the known flags belong to. */
  private current(path: string): boolean {
    const mailbox = this.client.mailbox || null;
    if (mailbox !== this.selection) {
      this.selection = mailbox;
      this.known.clear();
    }
    return !!mailbox && mailbox.path === path;
  }
}

/**
 * The UIDs that searches not about flags found in the folder one connection has selected. Messages
 * never change, so such a result stays true until a message comes or goes; the server must tell the
 * session of both (EXISTS, EXPUNGE: RFC 3501 §5.2, §7.3.1, §7.4.1) at the latest in the answer to a
 * NOOP, which imapflow emits as `exists` and `expunge`; either forgets every result. So a repeated
 * search costs a NOOP, not the server's search (GreenMail's TEXT search reads every message). A new
 * selection or a closed connection starts again, as for SessionFlags.
 */
export class SessionSearches {
  private selection: MailboxObject | null = null;
  private readonly found = new Map<string, number[]>();

  constructor(private readonly client: ImapFlow) {
    const forget = (event: { path: string }) => {
      if (this.current(event.path)) this.found.clear();
    };
    client.on('exists', forget);
    client.on('expunge', forget);
  }

  get(path: string, criteria: string): number[] | undefined {
    if (!this.current(path)) return undefined;
    const uids = this.found.get(criteria);
    if (!uids) return undefined;
    this.found.delete(criteria);
    this.found.set(criteria, uids);
    return [...uids];
  }

  remember(path: string, criteria: string, uids: number[]): void {
    if (!this.current(path)) return;
    this.found.delete(criteria);
    this.found.set(criteria, [...uids]);
    while (this.found.size > SESSION_SEARCHES_MAX)
      this.found.delete(this.found.keys().next().value as string);
  }

  private current(path: string): boolean {
    const mailbox = this.client.mailbox || null;
    if (mailbox !== this.selection) {
      this.selection = mailbox;
      this.found.clear();
    }
    return !!mailbox && mailbox.path === path;
  }
}
