/** A slot's kind and flags (a byte). */
const MESSAGE = 1;
const NOTE = 2;
const KIND = 3;
/** A message written by a user (the owner, a contact or a trigger). */
const USER = 4;
/** The slot's text is in the full-text index (a message without text is known but not indexed). */
const INDEXED = 8;

/** What the index keeps of a note besides its terms (notes are few: a map is fine). */
export interface NoteState {
  status: string;
  supersededBy: string | null;
  expiresAt: number | null;
}

export interface SlotView {
  kind: 'note' | 'message';
  id: string;
  chatId: string | null;
  date: number;
  user: boolean;
  indexed: boolean;
}

/** The saved form of a table's message slots (notes are never saved: they are read from the database). */
export interface SavedMessages {
  slots: Uint32Array;
  flags: Uint8Array;
  dates: Float64Array;
  chats: Int32Array;
  ids: string[];
  chatIds: string[];
}

/**
 * Every document the memory index knows, one numbered slot each, in typed arrays: the
 * slot number is also the document's id in MiniSearch. 100,000 messages cost a few
 * megabytes here, where an object per message cost tens (and the garbage collector's time).
 * A freed slot is reused by the next document.
 */
export class DocTable {
  private flags = new Uint8Array(1024);
  private dates = new Float64Array(1024);
  private chats = new Int32Array(1024).fill(-1);
  private ids: Array<string | undefined> = [];
  private readonly messageSlots = new Map<string, number>();
  private readonly noteSlots = new Map<string, number>();
  private readonly notes = new Map<number, NoteState>();
  private readonly chatIds: string[] = [];
  private readonly chatNumbers = new Map<string, number>();
  private readonly free: number[] = [];
  private next = 0;
  private messageCount = 0;

  /** Messages known (with or without text). */
  get messages(): number {
    return this.messageCount;
  }

  /** Notes held (a proposal is not: it is never searched). */
  get noteCount(): number {
    return this.notes.size;
  }

  /** Documents in the full-text index. */
  get indexed(): number {
    let n = 0;
    for (let slot = 0; slot < this.next; slot++)
      if (this.flags[slot] & INDEXED) n++;
    return n;
  }

  slotOf(kind: 'note' | 'message', id: string): number | undefined {
    return (kind === 'note' ? this.noteSlots : this.messageSlots).get(id);
  }

  setMessage(
    id: string,
    chatId: string,
    date: number,
    user: boolean,
    indexed: boolean,
  ): number {
    let slot = this.messageSlots.get(id);
    if (slot === undefined) {
      slot = this.allocate();
      this.messageSlots.set(id, slot);
      this.messageCount++;
    }
    this.flags[slot] = MESSAGE | (user ? USER : 0) | (indexed ? INDEXED : 0);
    this.dates[slot] = date;
    this.chats[slot] = this.chatNumber(chatId);
    this.ids[slot] = id;
    return slot;
  }

  setNote(
    id: string,
    chatId: string | null,
    date: number,
    state: NoteState,
  ): number {
    let slot = this.noteSlots.get(id);
    if (slot === undefined) {
      slot = this.allocate();
      this.noteSlots.set(id, slot);
    }
    this.flags[slot] = NOTE | INDEXED;
    this.dates[slot] = date;
    this.chats[slot] = chatId === null ? -1 : this.chatNumber(chatId);
    this.ids[slot] = id;
    this.notes.set(slot, state);
    return slot;
  }

  remove(slot: number): void {
    const kind = this.flags[slot] & KIND;
    const id = this.ids[slot];
    if (!kind || id === undefined) return;
    if (kind === NOTE) {
      this.noteSlots.delete(id);
      this.notes.delete(slot);
    } else {
      this.messageSlots.delete(id);
      this.messageCount--;
    }
    this.flags[slot] = 0;
    this.chats[slot] = -1;
    this.ids[slot] = undefined;
    this.free.push(slot);
  }

  isIndexed(slot: number): boolean {
    return (this.flags[slot] & INDEXED) !== 0;
  }

  isNote(slot: number): boolean {
    return (this.flags[slot] & KIND) === NOTE;
  }

  date(slot: number): number {
    return this.dates[slot];
  }

  /** The chat's id, or null (a note said outside a chat, a free slot). */
  chatOf(slot: number): string | null {
    const n = this.chats[slot];
    return n < 0 ? null : this.chatIds[n];
  }

  note(slot: number): NoteState | undefined {
    return this.notes.get(slot);
  }

  view(slot: number): SlotView | null {
    const flags = this.flags[slot];
    const id = this.ids[slot];
    if (!(flags & KIND) || id === undefined) return null;
    return {
      kind: (flags & KIND) === NOTE ? 'note' : 'message',
      id,
      chatId: this.chatOf(slot),
      date: this.dates[slot],
      user: (flags & USER) !== 0,
      indexed: (flags & INDEXED) !== 0,
    };
  }

  /** The message slots of a chat (a scan of the table: only a deleted or re-read chat asks). */
  messagesOf(chatId: string): number[] {
    const n = this.chatNumbers.get(chatId);
    if (n === undefined) return [];
    const out: number[] = [];
    for (let slot = 0; slot < this.next; slot++)
      if (this.chats[slot] === n && (this.flags[slot] & KIND) === MESSAGE)
        out.push(slot);
    return out;
  }

  /** The newest user message of a chat before `before` (ids are time-ordered). */
  userMessageBefore(chatId: string, before: string | null): string | null {
    let best: string | null = null;
    for (const slot of this.messagesOf(chatId)) {
      const id = this.ids[slot] as string;
      if (!(this.flags[slot] & USER) || (before && id >= before)) continue;
      if (!best || id > best) best = id;
    }
    return best;
  }

  /** The slots whose text is in the full-text index. */
  *indexedSlots(): Generator<number> {
    for (let slot = 0; slot < this.next; slot++)
      if (this.flags[slot] & INDEXED) yield slot;
  }

  noteSlotList(): number[] {
    return [...this.noteSlots.values()];
  }

  /** The message slots, for a writer that reads them one column at a time (`snapshotPieces`). */
  messageSlotList(): IterableIterator<number> {
    return this.messageSlots.values();
  }

  /** A slot's flags, chat number and id as saved (`SavedMessages`). */
  savedFlags(slot: number): number {
    return this.flags[slot];
  }

  savedChat(slot: number): number {
    return this.chats[slot];
  }

  savedId(slot: number): string {
    return this.ids[slot] as string;
  }

  /** The chats' ids, by the numbers `savedChat` gives. */
  chatIdList(): readonly string[] {
    return this.chatIds;
  }

  static load(saved: SavedMessages): DocTable {
    const table = new DocTable();
    for (const chatId of saved.chatIds) table.chatNumber(chatId);
    const top = saved.slots.reduce((a, b) => Math.max(a, b + 1), 0);
    table.grow(top);
    table.next = top;
    for (let i = 0; i < saved.slots.length; i++) {
      const slot = saved.slots[i];
      table.flags[slot] = saved.flags[i] & (KIND | USER | INDEXED);
      table.dates[slot] = saved.dates[i];
      table.chats[slot] = saved.chats[i];
      table.ids[slot] = saved.ids[i];
      table.messageSlots.set(saved.ids[i], slot);
      table.messageCount++;
    }
    for (let slot = top - 1; slot >= 0; slot--)
      if (!table.flags[slot]) table.free.push(slot);
    return table;
  }

  private chatNumber(chatId: string): number {
    let n = this.chatNumbers.get(chatId);
    if (n === undefined) {
      n = this.chatIds.push(chatId) - 1;
      this.chatNumbers.set(chatId, n);
    }
    return n;
  }

  private allocate(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    this.grow(this.next + 1);
    return this.next++;
  }

  private grow(size: number): void {
    if (size <= this.flags.length) return;
    const length = Math.max(size, this.flags.length * 2);
    const flags = new Uint8Array(length);
    flags.set(this.flags);
    const dates = new Float64Array(length);
    dates.set(this.dates);
    const chats = new Int32Array(length).fill(-1);
    chats.set(this.chats);
    this.flags = flags;
    this.dates = dates;
    this.chats = chats;
  }
}
