import SearchableMap from 'minisearch/SearchableMap';
import { indexTerm, words } from './word-forms';

/** Growth of a term's run when it is full: half again (a run of 1 grows to 2, 4, 6, 9...). */
const growTo = (count: number): number => count + Math.max(2, count >> 1);
/** Freed or abandoned pool entries after which the pools are compacted (and their share of the pool). */
const MIN_WASTE = 1 << 16;
/** Discarded documents after which their postings are swept out (MiniSearch's auto-vacuum thresholds). */
const MIN_DEAD = 20;
const DEAD_FACTOR = 0.1;
/** A term frequency is kept in 16 bits: a word said more than 65,535 times in one message counts as 65,535. */
const MAX_FREQ = 0xffff;

/**
 * The full-text postings of memory search, in typed arrays: for each term one run of
 * (document, term frequency) pairs in two big pools (`Uint32Array` documents,
 * `Uint16Array` frequencies), the terms in MiniSearch's radix tree (`SearchableMap`, for
 * its prefix and typo look-ups) mapping each to a small integer. MiniSearch itself kept a
 * `Map<field, Map<doc, freq>>` per term: about 54 bytes a posting, 110 MB of heap at
 * 100,000 messages, where a posting costs 6 bytes here.
 *
 * Documents are added as MiniSearch adds them (one field; its length the number of distinct
 * words, its average updated with the same arithmetic) so `RankedSearch` scores exactly as
 * before. A document has an internal number that is never reused until the next sweep: a
 * discarded one keeps its postings, skipped when read, until enough are discarded to sweep
 * them out (and renumber the documents by their slot). A run that is full moves to the end
 * of the pool with room to grow; the space left behind is reclaimed by the same sweep.
 */
export class PostingsStore {
  private terms = new SearchableMap<number>();
  private runStart = new Uint32Array(1024);
  private runCount = new Uint32Array(1024);
  private runCap = new Uint32Array(1024);
  private termTotal = 0;
  private readonly freeTerms: number[] = [];
  private docs = new Uint32Array(1 << 14);
  private freqs = new Uint16Array(1 << 14);
  private used = 0;
  private waste = 0;
  /** By internal document number: its slot (-1: discarded) and its length (distinct words). */
  private slotOf = new Int32Array(1024);
  private lengthOf = new Uint32Array(1024);
  /** By slot: its internal document number (-1: none). */
  private docOfSlot = new Int32Array(1024).fill(-1);
  private nextDoc = 0;
  private documents = 0;
  private average = 0;
  private deadDocs = 0;

  /** Documents in the index. */
  get documentCount(): number {
    return this.documents;
  }

  /** The average document length (distinct words), as MiniSearch keeps it. */
  get averageLength(): number {
    return this.average;
  }

  /** Discarded documents whose postings are still in the pools (skipped when read). */
  get dead(): number {
    return this.deadDocs;
  }

  /** One above the greatest internal document number. */
  get docLimit(): number {
    return this.nextDoc;
  }

  /** Terms known (some may have only discarded documents' postings until the next sweep). */
  get termCount(): number {
    return this.terms.size;
  }

  /** Postings held, discarded documents' included. */
  get postingCount(): number {
    let n = 0;
    for (let t = 0; t < this.termTotal; t++) n += this.runCount[t];
    return n;
  }

  has(slot: number): boolean {
    return slot < this.docOfSlot.length && this.docOfSlot[slot] >= 0;
  }

  /** Adds a document's text under its slot (a slot already in is replaced). */
  add(slot: number, text: string): void {
    if (this.has(slot)) this.discard(slot);
    const tokens = words(text);
    const doc = this.newDoc(slot);
    const length = new Set(tokens).size;
    this.lengthOf[doc] = length;
    // MiniSearch's own arithmetic (`addFieldLength`), so averages and scores stay bit for bit.
    this.average =
      (this.average * this.documents + length) / (this.documents + 1);
    this.documents++;
    for (const token of tokens) {
      const term = indexTerm(token);
      if (term) this.addTerm(term, slot);
    }
  }

  discard(slot: number): void {
    if (!this.has(slot)) return;
    const doc = this.docOfSlot[slot];
    this.docOfSlot[slot] = -1;
    this.slotOf[doc] = -1;
    // MiniSearch's `removeFieldLength`.
    if (this.documents === 1) this.average = 0;
    else
      this.average =
        (this.average * this.documents - this.lengthOf[doc]) /
        (this.documents - 1);
    this.documents--;
    this.deadDocs++;
    if (
      this.deadDocs >= MIN_DEAD &&
      this.deadDocs / (this.documents + this.deadDocs + 1) >= DEAD_FACTOR
    )
      this.sweep();
  }

  /** A term's number, if known. */
  termId(term: string): number | undefined {
    return this.terms.get(term);
  }

  /** The terms that start with `prefix` (itself included), as the radix tree lists them. */
  withPrefix(prefix: string): Iterable<[string, number]> {
    return this.terms.atPrefix(prefix).entries();
  }

  /** The terms within `maxDistance` edits of `term`: term → [number, distance]. */
  near(term: string, maxDistance: number): Map<string, [number, number]> {
    return this.terms.fuzzyGet(term, maxDistance);
  }

  /** Where a term's run starts in `postingDocs` / `postingFreqs`, and how many postings it has. */
  runOf(termId: number): { start: number; count: number } {
    return { start: this.runStart[termId], count: this.runCount[termId] };
  }

  /** The document pool (internal numbers); read between `runOf`'s bounds only. */
  get postingDocs(): Uint32Array {
    return this.docs;
  }

  get postingFreqs(): Uint16Array {
    return this.freqs;
  }

  /** A document's slot, or -1 once discarded. */
  slotOfDoc(doc: number): number {
    return this.slotOf[doc];
  }

  lengthOfDoc(doc: number): number {
    return this.lengthOf[doc];
  }

  /** Every term with its number (the radix tree's order). */
  entries(): Iterable<[string, number]> {
    return this.terms.entries();
  }

  /** Every document in: its slot and its length, by internal number. */
  *liveDocs(): Generator<[slot: number, length: number]> {
    for (let doc = 0; doc < this.nextDoc; doc++)
      if (this.slotOf[doc] >= 0) yield [this.slotOf[doc], this.lengthOf[doc]];
  }

  private newDoc(slot: number): number {
    const doc = this.nextDoc++;
    if (doc >= this.slotOf.length) {
      const size = Math.max(doc + 1, this.slotOf.length * 2);
      this.slotOf = grown(this.slotOf, size);
      this.lengthOf = grown(this.lengthOf, size);
    }
    if (slot >= this.docOfSlot.length) {
      const next = new Int32Array(
        Math.max(slot + 1, this.docOfSlot.length * 2),
      ).fill(-1);
      next.set(this.docOfSlot);
      this.docOfSlot = next;
    }
    this.slotOf[doc] = slot;
    this.docOfSlot[slot] = doc;
    return doc;
  }

  private addTerm(term: string, slot: number): void {
    let t = this.terms.get(term);
    if (t === undefined) {
      t = this.newTerm(0);
      this.terms.set(term, t);
    }
    let doc = this.docOfSlot[slot];
    let count = this.runCount[t];
    const start = this.runStart[t];
    // A document's words are added together: its posting, if any, is the run's last.
    if (count && this.docs[start + count - 1] === doc) {
      const at = start + count - 1;
      if (this.freqs[at] < MAX_FREQ) this.freqs[at]++;
      return;
    }
    if (count === this.runCap[t]) {
      this.move(t, growTo(count));
      // A sweep on the way renumbers documents and drops discarded postings.
      doc = this.docOfSlot[slot];
      count = this.runCount[t];
    }
    const at = this.runStart[t] + count;
    this.docs[at] = doc;
    this.freqs[at] = 1;
    this.runCount[t] = count + 1;
  }

  /** A term number for a run of `cap` postings at the pool's end. */
  private newTerm(cap: number): number {
    const t = this.freeTerms.pop() ?? this.termTotal++;
    if (t >= this.runStart.length) {
      const size = this.runStart.length * 2;
      this.runStart = grown(this.runStart, size);
      this.runCount = grown(this.runCount, size);
      this.runCap = grown(this.runCap, size);
    }
    this.reserve(cap);
    this.runStart[t] = this.used;
    this.runCount[t] = 0;
    this.runCap[t] = cap;
    this.used += cap;
    return t;
  }

  /** Moves a full run to the pool's end with room for `cap` postings (or extends it there). */
  private move(t: number, cap: number): void {
    const start = this.runStart[t];
    const old = this.runCap[t];
    if (start + old === this.used) {
      this.reserve(cap - old);
      this.used += cap - old;
      this.runCap[t] = cap;
      return;
    }
    if (this.waste >= MIN_WASTE && this.waste * 2 >= this.used) {
      this.sweep();
      this.move(t, cap);
      return;
    }
    this.reserve(cap);
    const count = this.runCount[t];
    this.docs.copyWithin(this.used, start, start + count);
    this.freqs.copyWithin(this.used, start, start + count);
    this.runStart[t] = this.used;
    this.runCap[t] = cap;
    this.used += cap;
    this.waste += old;
  }

  private reserve(extra: number): void {
    const need = this.used + extra;
    if (need <= this.docs.length) return;
    const size = Math.max(need, Math.ceil(this.docs.length * 1.25));
    this.docs = grown(this.docs, size);
    this.freqs = grown(this.freqs, size);
  }

  /**
   * Rewrites the pools without discarded documents' postings and the space runs left behind,
   * each run exactly as long as it is; documents renumbered by slot; terms left with no
   * posting removed. A few milliseconds per million postings, and rare.
   */
  sweep(): void {
    let live = 0;
    for (let t = 0; t < this.termTotal; t++) live += this.runCount[t];
    const docs = new Uint32Array(Math.max(1 << 14, live));
    const freqs = new Uint16Array(docs.length);
    const renumber = this.slotOf;
    let at = 0;
    const emptied = new Set<number>();
    for (let t = 0; t < this.termTotal; t++) {
      const start = this.runStart[t];
      const end = start + this.runCount[t];
      const from = at;
      for (let i = start; i < end; i++) {
        const slot = renumber[this.docs[i]];
        if (slot < 0) continue;
        docs[at] = slot;
        freqs[at++] = this.freqs[i];
      }
      this.runStart[t] = from;
      this.runCount[t] = this.runCap[t] = at - from;
      if (at === from && end > start) emptied.add(t);
    }
    // Documents numbered by their slot from now on.
    let top = 0;
    for (let doc = 0; doc < this.nextDoc; doc++)
      if (renumber[doc] >= 0) top = Math.max(top, renumber[doc] + 1);
    const slotOf = new Int32Array(Math.max(1024, top)).fill(-1);
    const lengthOf = new Uint32Array(slotOf.length);
    for (let doc = 0; doc < this.nextDoc; doc++) {
      const slot = renumber[doc];
      if (slot < 0) continue;
      slotOf[slot] = slot;
      lengthOf[slot] = this.lengthOf[doc];
      this.docOfSlot[slot] = slot;
    }
    this.slotOf = slotOf;
    this.lengthOf = lengthOf;
    this.nextDoc = top;
    this.docs = docs;
    this.freqs = freqs;
    this.used = at;
    this.waste = 0;
    this.deadDocs = 0;
    if (emptied.size) {
      const gone: string[] = [];
      for (const [term, t] of this.terms) if (emptied.has(t)) gone.push(term);
      for (const term of gone) this.terms.delete(term);
      this.freeTerms.push(...emptied);
    }
  }

  /** Used by `PostingsLoader` only. */
  loadDocuments(slots: Uint32Array, lengths: Uint32Array): void {
    let top = 0;
    for (const slot of slots) top = Math.max(top, slot + 1);
    this.slotOf = new Int32Array(Math.max(1024, top)).fill(-1);
    this.lengthOf = new Uint32Array(this.slotOf.length);
    this.docOfSlot = new Int32Array(this.slotOf.length).fill(-1);
    let total = 0;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      this.slotOf[slot] = slot;
      this.docOfSlot[slot] = slot;
      this.lengthOf[slot] = lengths[i];
      total += lengths[i];
    }
    this.nextDoc = top;
    this.documents = slots.length;
    this.average = slots.length ? total / slots.length : 0;
  }

  /** Used by `PostingsLoader` only: a term whose `count` postings are then written at `runOf(t).start`. */
  loadTerm(term: string, count: number): number {
    const t = this.newTerm(count);
    this.runCount[t] = count;
    this.terms.set(term, t);
    return t;
  }

  /** Used by `PostingsLoader` only: the pools sized for `postings` at once. */
  reservePostings(postings: number): void {
    this.reserve(postings);
  }
}

/**
 * Fills a store from a snapshot's parts: the documents by slot with their lengths, then the
 * terms one by one with their postings (document slots and frequencies, none discarded).
 */
export class PostingsLoader {
  readonly store = new PostingsStore();

  constructor(
    documents: { slots: Uint32Array; lengths: Uint32Array },
    postings: number,
  ) {
    this.store.loadDocuments(documents.slots, documents.lengths);
    this.store.reservePostings(postings);
  }

  /** A term and where its postings go (`postingDocs` / `postingFreqs` from `start`, `count` of them). */
  term(term: string, count: number): number {
    const t = this.store.loadTerm(term, count);
    return this.store.runOf(t).start;
  }
}

function grown<T extends Uint32Array | Int32Array | Uint16Array>(
  array: T,
  size: number,
): T {
  const next = new (array.constructor as new (size: number) => T)(size);
  next.set(array);
  return next;
}
