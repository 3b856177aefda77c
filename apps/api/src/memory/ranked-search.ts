import type MiniSearch from 'minisearch';

/** A term's postings in MiniSearch's index: field id → (short document id → term frequency). */
type FieldTermData = Map<number, Map<number, number>>;

/**
 * What this ranking reads of a MiniSearch 7.2 instance. These members are not in its typed API;
 * `ranked-search.spec.ts` checks that the ranking still equals `MiniSearch#search`'s, so an upgrade
 * that changes them fails there rather than in production.
 */
interface MiniSearchInternals {
  _index: {
    get(term: string): FieldTermData | undefined;
    atPrefix(prefix: string): Iterable<[string, FieldTermData]>;
    fuzzyGet(
      term: string,
      maxDistance: number,
    ): Map<string, [FieldTermData, number]>;
  };
  _documentIds: Map<number, unknown>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _nextId: number;
}

export interface RankOptions {
  /** Query terms after the index's own term pipeline (duplicates count twice, as in MiniSearch). */
  terms: readonly string[];
  /** How many of the best accepted documents to return. */
  top: number;
  prefix: (term: string) => boolean;
  /** The edit distance as a fraction of the term's length (MiniSearch's `fuzzy`), or false. */
  fuzzy: (term: string) => number | false;
  weights: { prefix: number; fuzzy: number };
  /** Whether a document (by the id it was added with) may be returned. */
  accept(id: unknown): boolean;
}

export interface RankedHit {
  /** The id the document was added with. */
  id: unknown;
  score: number;
  /** The query terms it matched. */
  terms: string[];
}

const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const MAX_FUZZY = 6;
const MAX_TERMS = 30;

/**
 * The best `top` documents for a query, scored exactly as `MiniSearch#search` scores them
 * (BM25 per field, prefix and typo weights, OR of the terms, times the number of query
 * terms matched), but without building a result object for every matching document:
 * scores add up in typed arrays and only a document that would enter the top is offered
 * to `accept`. A common word in 50,000 messages costs a few milliseconds instead of hundreds.
 */
export class RankedSearch {
  private scores = new Float64Array(1024);
  private matched = new Uint32Array(1024);
  private touched = new Int32Array(1024);
  private lengthCache = new Float32Array(0);
  private lengthOwner: object | null = null;

  rank(
    mini: MiniSearch<never> | MiniSearch<{ id: unknown }>,
    options: RankOptions,
  ): RankedHit[] {
    const index = mini as unknown as MiniSearchInternals;
    this.ensureCapacity(index._nextId);
    const terms = options.terms.slice(0, MAX_TERMS);
    const distinct = [...new Set(terms)];
    let touchedCount = 0;
    // Discarded documents keep their postings until MiniSearch vacuums them: skip those only then.
    const dirty = mini.dirtCount > 0;
    const lengths = index._fieldLength;
    const lengthCache = this.lengthsOf(mini);
    const scores = this.scores;
    const matched = this.matched;
    const add = (
      bit: number,
      data: FieldTermData | undefined,
      weight: number,
    ): void => {
      if (!data) return;
      for (const [fieldId, postings] of data) {
        const avg = index._avgFieldLength[fieldId];
        let live = postings.size;
        if (dirty)
          for (const docId of postings.keys())
            if (!index._documentIds.has(docId)) live--;
        const idf = Math.log(
          1 + (index._documentCount - live + 0.5) / (live + 0.5),
        );
        const norm = (BM25.k * BM25.b) / avg;
        const base = BM25.k * (1 - BM25.b);
        for (const [docId, tf] of postings) {
          if (dirty && !index._documentIds.has(docId)) continue;
          // A short id is never reused, so its length, once read, stays true for this instance.
          let length = fieldId === 0 ? lengthCache[docId] - 1 : -1;
          if (length < 0) {
            length = lengths.get(docId)?.[fieldId] ?? 0;
            if (fieldId === 0) lengthCache[docId] = length + 1;
          }
          const score =
            weight *
            idf *
            (BM25.d + (tf * (BM25.k + 1)) / (tf + base + norm * length));
          if (matched[docId] === 0) {
            if (touchedCount === this.touched.length) this.growTouched();
            this.touched[touchedCount++] = docId;
          }
          scores[docId] += score;
          matched[docId] |= 1 << bit;
        }
      }
    };
    for (const term of terms) {
      const bit = distinct.indexOf(term);
      add(bit, index._index.get(term), 1);
      const fuzzy = options.fuzzy(term);
      let fuzzyMatches: Map<string, [FieldTermData, number]> | undefined;
      if (fuzzy !== false) {
        const maxDistance =
          fuzzy < 1
            ? Math.min(MAX_FUZZY, Math.round(term.length * fuzzy))
            : fuzzy;
        if (maxDistance)
          fuzzyMatches = index._index.fuzzyGet(term, maxDistance);
      }
      if (options.prefix(term))
        for (const [derived, data] of index._index.atPrefix(term)) {
          const distance = derived.length - term.length;
          if (!distance) continue;
          fuzzyMatches?.delete(derived);
          add(
            bit,
            data,
            (options.weights.prefix * derived.length) /
              (derived.length + 0.3 * distance),
          );
        }
      if (fuzzyMatches)
        for (const [derived, [data, distance]] of fuzzyMatches) {
          if (!distance) continue;
          add(
            bit,
            data,
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
      if (!options.accept(index._documentIds.get(doc))) {
        this.matched[doc] = 0;
        continue;
      }
      if (heap.length < options.top) heapPush(heap, { doc, score });
      else heapReplaceTop(heap, { doc, score });
      // The bit mask stays until the terms are read below.
    }
    heap.sort((a, b) => b.score - a.score);
    const hits = heap.map(({ doc, score }) => ({
      id: index._documentIds.get(doc),
      score,
      terms: distinct.filter((_, bit) => this.matched[doc] & (1 << bit)),
    }));
    for (let i = 0; i < touchedCount; i++) this.matched[this.touched[i]] = 0;
    return hits;
  }

  /** The first field's length by short id, plus one (0: not read yet). */
  private lengthsOf(mini: object): Float32Array {
    if (
      this.lengthOwner !== mini ||
      this.lengthCache.length < this.scores.length
    ) {
      const next = new Float32Array(this.scores.length);
      if (this.lengthOwner === mini) next.set(this.lengthCache);
      this.lengthCache = next;
      this.lengthOwner = mini;
    }
    return this.lengthCache;
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
