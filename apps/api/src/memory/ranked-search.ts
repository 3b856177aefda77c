import type { PostingsStore } from './postings-store';

export interface RankOptions {
  /** Query terms after the index's own term pipeline (duplicates count twice, as in MiniSearch). */
  terms: readonly string[];
  /** How many of the best accepted documents to return. */
  top: number;
  prefix: (term: string) => boolean;
  /** The edit distance as a fraction of the term's length (MiniSearch's `fuzzy`), or false. */
  fuzzy: (term: string) => number | false;
  weights: { prefix: number; fuzzy: number };
  /** Whether a document (by its slot) may be returned. */
  accept(slot: number): boolean;
}

export interface RankedHit {
  /** The document's slot. */
  id: number;
  score: number;
  /** The query terms it matched. */
  terms: string[];
}

const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const MAX_FUZZY = 6;
const MAX_TERMS = 30;

/**
 * The best `top` documents for a query, scored exactly as `MiniSearch#search` scores them
 * (BM25+ on the one field, prefix and typo weights, OR of the terms, times the number of
 * query terms matched; `ranked-search.spec.ts` compares with MiniSearch itself), from the
 * typed-array `PostingsStore`: scores add up in typed arrays and only a document that would
 * enter the top is offered to `accept`. A common word in 50,000 messages costs a few
 * milliseconds instead of hundreds.
 */
export class RankedSearch {
  private scores = new Float64Array(1024);
  private matched = new Uint32Array(1024);
  private touched = new Int32Array(1024);

  rank(store: PostingsStore, options: RankOptions): RankedHit[] {
    this.ensureCapacity(store.docLimit);
    const terms = options.terms.slice(0, MAX_TERMS);
    const distinct = [...new Set(terms)];
    let touchedCount = 0;
    // Discarded documents keep their postings until the store sweeps them: skipped, and not counted.
    const dirty = store.dead > 0;
    const scores = this.scores;
    const matched = this.matched;
    const docs = store.postingDocs;
    const freqs = store.postingFreqs;
    const documentCount = store.documentCount;
    const norm = (BM25.k * BM25.b) / store.averageLength;
    const base = BM25.k * (1 - BM25.b);
    const add = (
      bit: number,
      termId: number | undefined,
      weight: number,
    ): void => {
      if (termId === undefined) return;
      const { start, count } = store.runOf(termId);
      if (!count) return;
      const end = start + count;
      let live = count;
      if (dirty)
        for (let i = start; i < end; i++)
          if (store.slotOfDoc(docs[i]) < 0) live--;
      if (!live) return;
      const idf = Math.log(1 + (documentCount - live + 0.5) / (live + 0.5));
      for (let i = start; i < end; i++) {
        const doc = docs[i];
        if (dirty && store.slotOfDoc(doc) < 0) continue;
        const tf = freqs[i];
        const score =
          weight *
          idf *
          (BM25.d +
            (tf * (BM25.k + 1)) / (tf + base + norm * store.lengthOfDoc(doc)));
        if (matched[doc] === 0) {
          if (touchedCount === this.touched.length) this.growTouched();
          this.touched[touchedCount++] = doc;
        }
        scores[doc] += score;
        matched[doc] |= 1 << bit;
      }
    };
    for (const term of terms) {
      const bit = distinct.indexOf(term);
      add(bit, store.termId(term), 1);
      const fuzzy = options.fuzzy(term);
      let fuzzyMatches: Map<string, [number, number]> | undefined;
      if (fuzzy !== false) {
        const maxDistance =
          fuzzy < 1
            ? Math.min(MAX_FUZZY, Math.round(term.length * fuzzy))
            : fuzzy;
        if (maxDistance) fuzzyMatches = store.near(term, maxDistance);
      }
      if (options.prefix(term))
        for (const [derived, termId] of store.withPrefix(term)) {
          const distance = derived.length - term.length;
          if (!distance) continue;
          fuzzyMatches?.delete(derived);
          add(
            bit,
            termId,
            (options.weights.prefix * derived.length) /
              (derived.length + 0.3 * distance),
          );
        }
      if (fuzzyMatches)
        for (const [derived, [termId, distance]] of fuzzyMatches) {
          if (!distance) continue;
          add(
            bit,
            termId,
            (options.weights.fuzzy * derived.length) /
              (derived.length + distance),
          );
        }
    }
    // A min-heap of the best accepted documents: `accept` runs only for those that would enter it.
    const heap: Array<{ doc: number; score: number }> = [];
    for (let i = 0; i < touchedCount; i++) {
      const doc = this.touched[i];
      const score = this.scores[doc] * popcount(this.matched[doc]);
      this.scores[doc] = 0;
      if (heap.length >= options.top && score <= heap[0].score) {
        this.matched[doc] = 0;
        continue;
      }
      if (!options.accept(store.slotOfDoc(doc))) {
        this.matched[doc] = 0;
        continue;
      }
      if (heap.length < options.top) heapPush(heap, { doc, score });
      else heapReplaceTop(heap, { doc, score });
      // The bit mask stays until the terms are read below.
    }
    heap.sort((a, b) => b.score - a.score);
    const hits = heap.map(({ doc, score }) => ({
      id: store.slotOfDoc(doc),
      score,
      terms: distinct.filter((_, bit) => this.matched[doc] & (1 << bit)),
    }));
    for (let i = 0; i < touchedCount; i++) this.matched[this.touched[i]] = 0;
    return hits;
  }

  private ensureCapacity(size: number): void {
    if (size <= this.scores.length) return;
    const length = Math.max(size, this.scores.length * 2);
    this.scores = new Float64Array(length);
    this.matched = new Uint32Array(length);
  }

  private growTouched(): void {
    const next = new Int32Array(this.touched.length * 2);
    next.set(this.touched);
    this.touched = next;
  }
}

function popcount(mask: number): number {
  let n = 0;
  for (let m = mask; m; m &= m - 1) n++;
  return n;
}

type Entry = { doc: number; score: number };

function heapPush(heap: Entry[], entry: Entry): void {
  heap.push(entry);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent].score <= heap[i].score) break;
    [heap[parent], heap[i]] = [heap[i], heap[parent]];
    i = parent;
  }
}

function heapReplaceTop(heap: Entry[], entry: Entry): void {
  heap[0] = entry;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let least = i;
    if (left < heap.length && heap[left].score < heap[least].score)
      least = left;
    if (right < heap.length && heap[right].score < heap[least].score)
      least = right;
    if (least === i) return;
    [heap[least], heap[i]] = [heap[i], heap[least]];
    i = least;
  }
}
