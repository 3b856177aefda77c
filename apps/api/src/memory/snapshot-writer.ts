import type { DocTable, SavedMessages } from './doc-table';
import { PostingsLoader, type PostingsStore } from './postings-store';

/** Bumped whenever the saved form or the term pipeline (word forms, stop words) changes. */
export const SNAPSHOT_VERSION = 2;
const MAGIC = 0x494d544d; // "MTMI" read as a little-endian u32

/** Work done between two yields at most: well under the 50 ms a request may wait. */
const SLICE_MS = 5;
/** Bytes handed to the file at once. */
const PIECE_BYTES = 1 << 16;
/** Postings or entries written between two looks at the clock. */
const CHECK_EVERY = 4096;
/** Postings of one run read or written at once. */
const CHUNK = 4096;

/** What a snapshot holds besides the postings, as read. */
export interface SnapshotHead {
  version: number;
  /** The last journal entry the snapshot includes. */
  seq: number;
  /** Also stored in the database when written: a snapshot whose token the database lacks is another database's. */
  token: string;
  /** A digest of the secrets its text was cleaned of: other secrets now, and it is not used. */
  secrets: string;
  /** The greatest message id it holds: newer messages are read at start. */
  newest: string | null;
  messages: SavedMessages;
}

/** What the writer is given: the head's small fields, the table's messages written from it. */
export type SnapshotFields = Omit<
  SnapshotHead,
  'messages' | 'version' | 'newest'
>;

export interface LoadedSnapshot {
  head: SnapshotHead;
  store: PostingsStore;
}

/**
 * Little-endian binary written into one reused buffer, handed out in pieces of about 64 KB.
 * A piece is valid until the next one is asked for.
 */
class Bytes {
  buf = Buffer.allocUnsafe(PIECE_BYTES * 2);
  pos = 0;

  room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(
      Math.max(this.buf.length * 2, this.pos + bytes),
    );
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  u8(n: number): void {
    this.room(1);
    this.buf[this.pos++] = n;
  }

  u16(n: number): void {
    this.room(2);
    this.pos = this.buf.writeUInt16LE(n, this.pos);
  }

  u32(n: number): void {
    this.room(4);
    this.pos = this.buf.writeUInt32LE(n, this.pos);
  }

  i32(n: number): void {
    this.room(4);
    this.pos = this.buf.writeInt32LE(n, this.pos);
  }

  f64(n: number): void {
    this.room(8);
    this.pos = this.buf.writeDoubleLE(n, this.pos);
  }

  /** A string as UTF-8 after its byte length (u32). */
  text(value: string): void {
    const length = Buffer.byteLength(value, 'utf8');
    this.u32(length);
    this.room(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }
}

/**
 * The snapshot's bytes in pieces, made a slice of a few milliseconds at a time with a yield to
 * the event loop between slices. Binary (version 2): the JSON text of version 1 wrote every
 * posting as digits (millions of them at 100,000 messages) and held the loop 80–200 ms at
 * times under load; here a posting is six bytes copied. Only the documents in `keep` (the
 * messages; notes are read from the database at each start) are written, and no discarded
 * document's postings. The caller keeps the index still until the last piece.
 *
 * Layout, little-endian: "MTMI", u32 version, u32 + JSON of the head's small fields (with the
 * counts below); the messages table (u32 slots, i32 chats, u8 flags, f64 dates, u32-prefixed
 * ids); the documents (u32 slots, u32 lengths); the terms, each u32-prefixed UTF-8, u32 count,
 * then that many u32 document slots and u16 frequencies; a footer of u32 terms, u32 postings
 * and "MTMI" (a file cut short is refused).
 */
export async function* snapshotPieces(
  fields: SnapshotFields,
  table: DocTable,
  store: PostingsStore,
  keep: (slot: number) => boolean,
): AsyncGenerator<Uint8Array> {
  const out = new Bytes();
  let sliceStart = performance.now();
  let work = 0;
  /** Every CHECK_EVERY steps: the piece when it is full, a yield to the event loop when the slice is over. */
  async function* pause(): AsyncGenerator<Uint8Array> {
    work = 0;
    if (out.pos >= PIECE_BYTES) {
      yield out.buf.subarray(0, out.pos);
      out.pos = 0;
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }

  const documents: number[] = [];
  const lengths: number[] = [];
  for (const [slot, length] of store.liveDocs()) {
    if (keep(slot)) {
      documents.push(slot);
      lengths.push(length);
    }
    if (++work >= CHECK_EVERY) yield* pause();
  }
  const count = table.messages;
  const chatIds = table.chatIdList();
  // The greatest message id (ids are time-ordered): newer messages are read after the snapshot.
  let newest: string | null = null;
  for (const slot of table.messageSlotList()) {
    const id = table.savedId(slot);
    if (newest === null || id > newest) newest = id;
    if (++work >= CHECK_EVERY) yield* pause();
  }
  const top = JSON.stringify({
    seq: fields.seq,
    token: fields.token,
    secrets: fields.secrets,
    newest,
    chatIds,
    messages: count,
    documents: documents.length,
  });
  out.u32(MAGIC);
  out.u32(SNAPSHOT_VERSION);
  const topBytes = Buffer.from(top, 'utf8');
  out.u32(topBytes.length);
  out.room(topBytes.length);
  out.pos += topBytes.copy(out.buf, out.pos);

  // Column by column, each a walk of the table's message slots (it is held still meanwhile).
  const columns: Array<(slot: number) => void> = [
    (slot) => out.u32(slot),
    (slot) => out.i32(table.savedChat(slot)),
    (slot) => out.u8(table.savedFlags(slot)),
    (slot) => out.f64(table.date(slot)),
    (slot) => out.text(table.savedId(slot)),
  ];
  for (const column of columns) {
    let written = 0;
    for (const slot of table.messageSlotList()) {
      column(slot);
      written++;
      if (++work >= CHECK_EVERY) yield* pause();
    }
    if (written !== count) throw new Error('messages changed while written');
  }
  for (const column of [documents, lengths])
    for (const value of column) {
      out.u32(value);
      if (++work >= CHECK_EVERY) yield* pause();
    }

  let terms = 0;
  let postings = 0;
  for (const [term, termId] of store.entries()) {
    const { start, count: size } = store.runOf(termId);
    const end = start + size;
    // A common word has a posting in most documents: its run is read in chunks, a yield possible
    // between two (plain loops in functions of their own, which V8 optimizes; not in this generator).
    let live = 0;
    for (let from = start; from < end; from += CHUNK) {
      live += liveIn(store, keep, from, Math.min(end, from + CHUNK));
      work += CHUNK;
      if (work >= CHECK_EVERY) yield* pause();
    }
    if (live) {
      terms++;
      postings += live;
      out.text(term);
      out.u32(live);
      for (const write of [writeSlots, writeFreqs])
        for (let from = start; from < end; from += CHUNK) {
          write(out, store, keep, from, Math.min(end, from + CHUNK));
          work += CHUNK;
          if (work >= CHECK_EVERY) yield* pause();
        }
    }
    if (++work >= CHECK_EVERY) yield* pause();
  }
  out.u32(terms);
  out.u32(postings);
  out.u32(MAGIC);
  if (out.pos) yield out.buf.subarray(0, out.pos);
}

function liveIn(
  store: PostingsStore,
  keep: (slot: number) => boolean,
  from: number,
  to: number,
): number {
  const docs = store.postingDocs;
  let live = 0;
  for (let i = from; i < to; i++) {
    const slot = store.slotOfDoc(docs[i]);
    if (slot >= 0 && keep(slot)) live++;
  }
  return live;
}

function writeSlots(
  out: Bytes,
  store: PostingsStore,
  keep: (slot: number) => boolean,
  from: number,
  to: number,
): void {
  const docs = store.postingDocs;
  out.room((to - from) * 4);
  const buf = out.buf;
  let pos = out.pos;
  for (let i = from; i < to; i++) {
    const slot = store.slotOfDoc(docs[i]);
    if (slot >= 0 && keep(slot)) pos = buf.writeUInt32LE(slot, pos);
  }
  out.pos = pos;
}

function writeFreqs(
  out: Bytes,
  store: PostingsStore,
  keep: (slot: number) => boolean,
  from: number,
  to: number,
): void {
  const docs = store.postingDocs;
  const freqs = store.postingFreqs;
  out.room((to - from) * 2);
  const buf = out.buf;
  let pos = out.pos;
  for (let i = from; i < to; i++) {
    const slot = store.slotOfDoc(docs[i]);
    if (slot >= 0 && keep(slot)) pos = buf.writeUInt16LE(freqs[i], pos);
  }
  out.pos = pos;
}

/** Reads a snapshot's bytes; throws when they are not a whole snapshot of this version. */
export function readSnapshot(bytes: Buffer): LoadedSnapshot | null {
  const end = bytes.length;
  let pos = 0;
  const need = (n: number): void => {
    if (n < 0 || pos + n > end) throw new Error('snapshot cut short');
  };
  const u32 = (): number => {
    need(4);
    const n = bytes.readUInt32LE(pos);
    pos += 4;
    return n;
  };
  const text = (): string => {
    const length = u32();
    need(length);
    const value = bytes.toString('utf8', pos, pos + length);
    pos += length;
    return value;
  };
  if (end < 4 || bytes.readUInt32LE(0) !== MAGIC) return null;
  pos = 4;
  const version = u32();
  if (version !== SNAPSHOT_VERSION) return null;
  if (end < 24 || bytes.readUInt32LE(end - 4) !== MAGIC)
    throw new Error('snapshot cut short');
  const headLength = u32();
  need(headLength);
  const top = JSON.parse(bytes.toString('utf8', pos, pos + headLength)) as {
    seq: unknown;
    token: unknown;
    secrets: unknown;
    newest: unknown;
    chatIds: unknown;
    messages: unknown;
    documents: unknown;
  };
  pos += headLength;
  const count = top.messages;
  const documents = top.documents;
  if (
    typeof top.seq !== 'number' ||
    typeof top.token !== 'string' ||
    typeof top.secrets !== 'string' ||
    (top.newest !== null && typeof top.newest !== 'string') ||
    !Array.isArray(top.chatIds) ||
    !top.chatIds.every((id) => typeof id === 'string') ||
    typeof count !== 'number' ||
    typeof documents !== 'number' ||
    !Number.isSafeInteger(count) ||
    !Number.isSafeInteger(documents) ||
    count < 0 ||
    documents < 0
  )
    throw new Error('snapshot head malformed');
  // Each message takes 21 bytes at least, each document 8: counts beyond the file are refused before any allocation.
  need(count * 21 + documents * 8);
  const chatIds = top.chatIds as string[];
  const messages: SavedMessages = {
    slots: new Uint32Array(count),
    chats: new Int32Array(count),
    flags: new Uint8Array(count),
    dates: new Float64Array(count),
    ids: new Array<string>(count),
    chatIds,
  };
  for (let i = 0; i < count; i++) messages.slots[i] = u32();
  for (let i = 0; i < count; i++) {
    const chat = bytes.readInt32LE(pos);
    pos += 4;
    if (chat < -1 || chat >= chatIds.length)
      throw new Error('snapshot chat out of range');
    messages.chats[i] = chat;
  }
  for (let i = 0; i < count; i++) messages.flags[i] = bytes[pos++];
  need(count * 8);
  for (let i = 0; i < count; i++) {
    messages.dates[i] = bytes.readDoubleLE(pos);
    pos += 8;
  }
  for (let i = 0; i < count; i++) messages.ids[i] = text();
  need(documents * 8);
  const docSlots = new Uint32Array(documents);
  const docLengths = new Uint32Array(documents);
  for (let i = 0; i < documents; i++) docSlots[i] = u32();
  for (let i = 0; i < documents; i++) docLengths[i] = u32();
  const termTotal = bytes.readUInt32LE(end - 12);
  const postingTotal = bytes.readUInt32LE(end - 8);
  if (postingTotal * 6 > end - pos) throw new Error('snapshot cut short');
  const loader = new PostingsLoader(
    { slots: docSlots, lengths: docLengths },
    postingTotal,
  );
  const body = end - 12;
  let terms = 0;
  let postings = 0;
  while (pos < body) {
    const term = text();
    const size = u32();
    need(size * 6);
    if (postings + size > postingTotal) throw new Error('snapshot postings');
    const at = loader.term(term, size);
    const docs = loader.store.postingDocs;
    const freqs = loader.store.postingFreqs;
    for (let i = 0; i < size; i++) {
      const slot = bytes.readUInt32LE(pos);
      pos += 4;
      if (!loader.store.has(slot))
        throw new Error('snapshot posting of no document');
      docs[at + i] = slot;
    }
    for (let i = 0; i < size; i++) {
      freqs[at + i] = bytes.readUInt16LE(pos);
      pos += 2;
    }
    terms++;
    postings += size;
  }
  if (pos !== body || terms !== termTotal || postings !== postingTotal)
    throw new Error('snapshot counts differ');
  return {
    head: {
      version,
      seq: top.seq,
      token: top.token,
      secrets: top.secrets,
      newest: top.newest as string | null,
      messages,
    },
    store: loader.store,
  };
}
