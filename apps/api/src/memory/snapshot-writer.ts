import type MiniSearch from 'minisearch';
import type { IndexSnapshot } from './index-snapshot';

/** What the writer reads of MiniSearch 7.2 (the fields its own `toJSON` reads). */
interface MiniSearchInternals {
  _documentCount: number;
  _nextId: number;
  _documentIds: Map<number, unknown>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _storedFields: Map<number, unknown>;
  _dirtCount: number;
  _index: Iterable<[string, Map<number, Map<number, number>>]>;
}

/** Work done between two yields at most: well under the 50 ms a request may wait. */
const SLICE_MS = 8;
/** Bytes handed to the file at once. */
const PIECE_BYTES = 1 << 16;
/** Postings or entries written between two looks at the clock. */
const CHECK_EVERY = 1024;

/** The snapshot without its index part (`mini`), which the writer makes from MiniSearch itself. */
export type SnapshotHead = Omit<IndexSnapshot, 'mini'>;

/**
 * JSON text written straight into one reused buffer: numbers digit by digit and strings by
 * `Buffer.write`, so a snapshot of 100,000 messages (millions of postings) makes almost no
 * garbage. A string per posting (the previous writer) made hundreds of megabytes of it, and
 * the collections it caused held the event loop longer than the work itself.
 */
class JsonBytes {
  buf = Buffer.allocUnsafe(PIECE_BYTES * 2);
  pos = 0;

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(
      Math.max(this.buf.length * 2, this.pos + bytes),
    );
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** Text known to be ASCII without anything to escape (punctuation, keys). */
  raw(text: string): void {
    this.room(text.length);
    // Punctuation between postings: a loop costs less than a call into Buffer's native write.
    if (text.length <= 16) {
      const buf = this.buf;
      for (let i = 0; i < text.length; i++)
        buf[this.pos++] = text.charCodeAt(i);
    } else this.pos += this.buf.write(text, this.pos, 'latin1');
  }

  byte(code: number): void {
    this.room(1);
    this.buf[this.pos++] = code;
  }

  /** A number as `JSON.stringify` writes it (integers digit by digit; others, rare here, through it). */
  number(n: number): void {
    // Slot numbers and frequencies: small integers, in integer arithmetic (the common case by far).
    if (n >= 0 && n <= 0x7fffffff && (n | 0) === n) {
      this.room(10);
      const buf = this.buf;
      let at =
        this.pos +
        (n < 10
          ? 1
          : n < 100
            ? 2
            : n < 1000
              ? 3
              : n < 10_000
                ? 4
                : n < 100_000
                  ? 5
                  : n < 1_000_000
                    ? 6
                    : n < 10_000_000
                      ? 7
                      : n < 100_000_000
                        ? 8
                        : n < 1_000_000_000
                          ? 9
                          : 10);
      this.pos = at;
      while (n >= 10) {
        const q = (n / 10) | 0;
        buf[--at] = 0x30 + n - q * 10;
        n = q;
      }
      buf[--at] = 0x30 + n;
      return;
    }
    if (!Number.isSafeInteger(n)) {
      this.raw(JSON.stringify(n));
      return;
    }
    // Dates in milliseconds, negative numbers.
    this.room(17);
    if (n < 0) {
      this.buf[this.pos++] = 0x2d;
      n = -n;
    }
    let digits = 1;
    for (let m = n; m >= 10; m = Math.floor(m / 10)) digits++;
    let at = this.pos + digits;
    this.pos = at;
    do {
      this.buf[--at] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
  }

  /** A JSON string: as UTF-8 unless it needs an escape (a quote, a control character, a lone surrogate). */
  string(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c < 0xe000)) {
        this.raw(JSON.stringify(text));
        return;
      }
    }
    this.room(text.length * 3 + 2);
    this.buf[this.pos++] = 0x22;
    this.pos += this.buf.write(text, this.pos, 'utf8');
    this.buf[this.pos++] = 0x22;
  }

  /** JSON text already made (UTF-8). */
  json(text: string): void {
    this.room(text.length * 3);
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }

  /** Any JSON value (the head's few fields, stored fields). */
  value(value: unknown): void {
    if (typeof value === 'number') this.number(value);
    else if (typeof value === 'string') this.string(value);
    else this.json(JSON.stringify(value));
  }
}

/**
 * The snapshot's JSON as byte pieces of about 64 KB, made a slice of a few milliseconds at a time
 * with a yield to the event loop between slices: `JSON.stringify` of the whole index (and
 * MiniSearch's `toJSON` before it) held the loop for one to three seconds at 100,000 messages.
 * The same JSON as `JSON.stringify({ ...head, mini: toJSON() })` with the documents not in
 * `keep` (the notes) left out, as if never added: `MiniSearch.loadJS` reads it unchanged.
 * A piece is valid until the next one is asked for (one buffer is reused): write it, or copy it.
 * The caller keeps the index still until the last piece (its writes are held meanwhile).
 */
export async function* snapshotPieces(
  head: SnapshotHead,
  mini: MiniSearch<{ id: number; text: string }>,
  keep: (externalId: unknown) => boolean,
): AsyncGenerator<Uint8Array> {
  const index = mini as unknown as MiniSearchInternals;
  const out = new JsonBytes();
  let sliceStart = performance.now();
  /** At a check point: the piece when it is full, a yield to the event loop when the slice is over. */
  async function* pause(): AsyncGenerator<Uint8Array> {
    if (out.pos >= PIECE_BYTES) {
      yield out.buf.subarray(0, out.pos);
      out.pos = 0;
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }

  const { messages, ...rest } = head;
  const top = JSON.stringify(rest);
  out.json(top.slice(0, -1));
  out.raw(`${top === '{}' ? '' : ','}"messages":{`);
  const arrays = Object.entries(messages) as Array<[string, unknown[]]>;
  for (const [i, [name, values]] of arrays.entries()) {
    if (i) out.byte(0x2c);
    out.string(name);
    out.raw(':[');
    for (let k = 0; k < values.length; k++) {
      if (k) out.byte(0x2c);
      out.value(values[k]);
      if (k % CHECK_EVERY === 0) yield* pause();
    }
    out.byte(0x5d);
  }
  out.byte(0x7d);

  // The documents kept: their short ids, and the field lengths they take off the averages.
  const dropped = new Set<number>();
  /**
   * Discarded documents whose postings are still in the index: left out as they go, instead of a
   * `vacuum()` first (it walks a thousand terms' postings at a time without a yield: hundreds of
   * milliseconds at 100,000 messages).
   */
  const dirty = index._dirtCount > 0;
  const fields = index._avgFieldLength.length;
  const droppedLength = new Array<number>(fields).fill(0);
  let seen = 0;
  for (const shortId of index._documentIds.keys()) {
    if (!keep(index._documentIds.get(shortId))) {
      dropped.add(shortId);
      const lengths = index._fieldLength.get(shortId) ?? [];
      for (let f = 0; f < fields; f++) droppedLength[f] += lengths[f] ?? 0;
    }
    if (++seen % 4096 === 0) yield* pause();
  }
  const before = index._documentCount;
  const after = before - dropped.size;
  const averages = dropped.size
    ? index._avgFieldLength.map((avg, f) =>
        after > 0 ? (avg * before - droppedLength[f]) / after : 0,
      )
    : index._avgFieldLength;

  out.raw(',"mini":{"documentCount":');
  out.number(after);
  out.raw(',"nextId":');
  out.number(index._nextId);
  out.raw(',"documentIds":{');
  yield* mapEntries(index._documentIds);
  out.raw(`},"fieldIds":${JSON.stringify(index._fieldIds)},"fieldLength":{`);
  yield* mapEntries(index._fieldLength);
  out.raw(`},"averageFieldLength":`);
  out.value(averages);
  out.raw(',"storedFields":{');
  yield* mapEntries(index._storedFields);
  // The discarded documents' postings are left out below: the index written has no dirt.
  out.raw('},"dirtCount":0');
  out.raw(',"index":[');
  let first = true;
  let n = 0;
  for (const [term, fieldIndex] of index._index) {
    // A term only the left-out documents have is left out (as if they had never been added).
    if (!anyKept(fieldIndex)) continue;
    if (!first) out.byte(0x2c);
    first = false;
    out.byte(0x5b);
    out.string(term);
    out.raw(',{');
    let firstField = true;
    for (const fieldId of fieldIndex.keys()) {
      const freqs = fieldIndex.get(fieldId) as Map<number, number>;
      if ((dropped.size || dirty) && !kept(freqs)) continue;
      if (!firstField) out.byte(0x2c);
      firstField = false;
      out.byte(0x22);
      out.number(fieldId);
      out.raw('":{');
      let firstPosting = true;
      for (const shortId of freqs.keys()) {
        if (!live(shortId)) continue;
        if (!firstPosting) out.byte(0x2c);
        firstPosting = false;
        out.byte(0x22);
        out.number(shortId);
        out.raw('":');
        out.number(freqs.get(shortId) as number);
        // A common word has a posting in most documents: a slice may end inside it.
        if (++n % CHECK_EVERY === 0) yield* pause();
      }
      out.byte(0x7d);
    }
    out.raw('}]');
    if (++n % 64 === 0) yield* pause();
  }
  out.raw('],"serializationVersion":2}}');
  if (out.pos) yield out.buf.subarray(0, out.pos);

  /** Neither left out nor discarded (a discarded document keeps its postings until a vacuum). */
  function live(shortId: number): boolean {
    return !dropped.has(shortId) && (!dirty || index._documentIds.has(shortId));
  }

  function kept(freqs: Map<number, number>): boolean {
    for (const shortId of freqs.keys()) if (live(shortId)) return true;
    return false;
  }

  function anyKept(fieldIndex: Map<number, Map<number, number>>): boolean {
    if (!dropped.size && !dirty) return true;
    for (const freqs of fieldIndex.values()) if (kept(freqs)) return true;
    return false;
  }

  async function* mapEntries(
    map: Map<number, unknown>,
  ): AsyncGenerator<Uint8Array> {
    let firstEntry = true;
    let k = 0;
    for (const shortId of map.keys()) {
      if (dropped.has(shortId)) continue;
      const value = map.get(shortId);
      // As JSON.stringify of the object toJSON makes: an undefined value is left out.
      if (value === undefined) continue;
      if (!firstEntry) out.byte(0x2c);
      out.byte(0x22);
      out.number(shortId);
      out.raw('":');
      if (Array.isArray(value) && value.length === 1) {
        // A field length list of one field: no string made for it.
        out.byte(0x5b);
        out.value(value[0]);
        out.byte(0x5d);
      } else out.value(value);
      firstEntry = false;
      if (++k % CHECK_EVERY === 0) yield* pause();
    }
  }
}
