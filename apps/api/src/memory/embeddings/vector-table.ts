/** Leading dimensions every row is scored on first. */
const PREFIX = 64;
/** Rows scored again on every dimension. */
const CANDIDATES = 400;

/** A stored vector's key: `n:<noteId>` or `m:<messageId>`. */
export type VectorKey = string;

export function vectorKey(kind: 'note' | 'message', id: string): VectorKey {
  return `${kind === 'note' ? 'n' : 'm'}:${id}`;
}

export function keyParts(key: VectorKey): {
  kind: 'note' | 'message';
  id: string;
} {
  return { kind: key[0] === 'n' ? 'note' : 'message', id: key.slice(2) };
}

export interface Neighbour {
  key: VectorKey;
  /** Cosine similarity (the vectors are unit length). */
  similarity: number;
}

/**
 * Every embedding of one model in memory: a unit vector quantised to Int8 by its own
 * scale (largest component → 127), its first PREFIX dimensions in one contiguous array
 * (`head`, what every search scans) and the rest in another (`tail`, read for the few
 * candidates). 100,000 vectors of 256 dimensions take 26 MB (Float32 would take 102),
 * and a search scans them in about 10 ms of CPU. The query stays Float32, so only the
 * stored side loses precision (about 0.5% of a similarity).
 */
export class VectorTable {
  private readonly headDims: number;
  private readonly tailDims: number;
  private head = new Int8Array(0);
  private tail = new Int8Array(0);
  private scales = new Float32Array(0);
  private hashes = new Uint32Array(0);
  private keys: Array<VectorKey | undefined> = [];
  private readonly rowOf = new Map<VectorKey, number>();
  private readonly free: number[] = [];
  private next = 0;
  /** Rows keyed `n:` (notes): recall, which finds notes only, has nothing to gain from a query vector without any. */
  private noteRows = 0;

  constructor(readonly dimensions: number) {
    if (dimensions % 4 !== 0 || dimensions < 4)
      throw new Error(
        `A vector table needs a multiple of 4 dimensions, not ${dimensions}`,
      );
    this.headDims = Math.min(PREFIX, dimensions);
    this.tailDims = dimensions - this.headDims;
  }

  get size(): number {
    return this.rowOf.size;
  }

  /** How many rows are notes' vectors (the rest are messages'). */
  get notes(): number {
    return this.noteRows;
  }

  has(key: VectorKey): boolean {
    return this.rowOf.has(key);
  }

  /** The hash of the text the key's vector was made from (0 when unknown). */
  textHash(key: VectorKey): number | undefined {
    const row = this.rowOf.get(key);
    return row === undefined ? undefined : this.hashes[row];
  }

  /** Room for `rows` vectors at once (a load that knows its count grows the arrays once). */
  reserve(rows: number): void {
    this.grow(rows);
  }

  /** Puts (or replaces) a vector; it is normalised here, so any length is fine. */
  set(key: VectorKey, vector: ArrayLike<number>, textHash = 0): void {
    if (vector.length !== this.dimensions)
      throw new Error(
        `A vector of ${vector.length} dimensions in a table of ${this.dimensions}`,
      );
    let row = this.rowOf.get(key);
    if (row === undefined) {
      row = this.free.pop() ?? this.next++;
      this.grow(row + 1);
      this.rowOf.set(key, row);
      this.keys[row] = key;
      if (key[0] === 'n') this.noteRows++;
    }
    let norm = 0;
    let max = 0;
    for (let i = 0; i < vector.length; i++) {
      norm += vector[i] * vector[i];
      max = Math.max(max, Math.abs(vector[i]));
    }
    norm = Math.sqrt(norm) || 1;
    const scale = max / norm / 127 || 1;
    const h = this.headDims;
    const t = this.tailDims;
    for (let i = 0; i < h; i++)
      this.head[row * h + i] = Math.round(vector[i] / norm / scale);
    for (let i = 0; i < t; i++)
      this.tail[row * t + i] = Math.round(vector[h + i] / norm / scale);
    this.scales[row] = scale;
    this.hashes[row] = textHash;
  }

  delete(key: VectorKey): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    this.rowOf.delete(key);
    if (key[0] === 'n') this.noteRows--;
    this.keys[row] = undefined;
    this.scales[row] = 0;
    this.head.fill(0, row * this.headDims, (row + 1) * this.headDims);
    this.tail.fill(0, row * this.tailDims, (row + 1) * this.tailDims);
    this.free.push(row);
    return true;
  }

  keyList(): IterableIterator<VectorKey> {
    return this.rowOf.keys();
  }

  /**
   * The most similar vectors to `query` that `accept` lets through, best first, at
   * most `limit`. Two stages: every row is scored on its first PREFIX dimensions (both
   * providers' models are trained so that a vector's leading dimensions are a smaller
   * embedding of their own, which is how their `dimensions` option shortens them), the
   * best CANDIDATES are scored again on all of them. `accept` is asked only of those,
   * and the candidates widen when too few pass (a narrow date range, a hidden chat).
   */
  nearest(
    query: Float32Array,
    limit: number,
    accept: (key: VectorKey) => boolean,
  ): Neighbour[] {
    if (query.length !== this.dimensions || !this.rowOf.size || limit < 1)
      return [];
    const count = this.next;
    const coarse = this.scoreHeads(query);
    for (let want = Math.max(CANDIDATES, limit * 8); ; want *= 4) {
      const rows = topRows(coarse, Math.min(want, count));
      const scored: Neighbour[] = [];
      for (const row of rows) {
        if (coarse[row] === -Infinity) break;
        scored.push({
          key: this.keys[row] as VectorKey,
          similarity: coarse[row] + this.scoreTail(row, query),
        });
      }
      scored.sort((a, b) => b.similarity - a.similarity);
      const out: Neighbour[] = [];
      for (const hit of scored) {
        if (!accept(hit.key)) continue;
        out.push(hit);
        if (out.length >= limit) return out;
      }
      if (want >= count) return out;
    }
  }

  /** Every row's score on the head dimensions (-Infinity for a free row): the one loop over the whole table. */
  private scoreHeads(query: Float32Array): Float32Array {
    const count = this.next;
    const dims = this.headDims;
    const head = this.head;
    const scales = this.scales;
    const scores = new Float32Array(count);
    for (let row = 0, base = 0; row < count; row++, base += dims) {
      const scale = scales[row];
      if (scale === 0) {
        scores[row] = -Infinity;
        continue;
      }
      // Four sums side by side: V8 keeps them in registers (a third faster than one).
      let a = 0;
      let b = 0;
      let c = 0;
      let d = 0;
      for (let i = 0; i < dims; i += 4) {
        a += head[base + i] * query[i];
        b += head[base + i + 1] * query[i + 1];
        c += head[base + i + 2] * query[i + 2];
        d += head[base + i + 3] * query[i + 3];
      }
      scores[row] = (a + b + c + d) * scale;
    }
    return scores;
  }

  private scoreTail(row: number, query: Float32Array): number {
    const dims = this.tailDims;
    const base = row * dims;
    const offset = this.headDims;
    let sum = 0;
    for (let i = 0; i < dims; i++)
      sum += this.tail[base + i] * query[offset + i];
    return sum * this.scales[row];
  }

  private grow(size: number): void {
    if (size <= this.scales.length) return;
    // By an eighth, not double: a table of 100,000 rows (26 MB) grown for one more row by doubling
    // held 26 MB of empty rows for good (the load reserves the rows it counts, and a turn adds a few).
    const length = Math.max(size, Math.ceil(this.scales.length * 1.125), 1024);
    const head = new Int8Array(length * this.headDims);
    head.set(this.head);
    const tail = new Int8Array(length * this.tailDims);
    tail.set(this.tail);
    const scales = new Float32Array(length);
    scales.set(this.scales);
    const hashes = new Uint32Array(length);
    hashes.set(this.hashes);
    this.head = head;
    this.tail = tail;
    this.scales = scales;
    this.hashes = hashes;
  }
}

/** The `n` rows of highest score, best first (a bounded insertion into a sorted buffer). */
function topRows(scores: Float32Array, n: number): number[] {
  // A wide buffer (a filter that lets little through): one sort is cheaper than insertions.
  if (n > 1024)
    return Array.from(scores.keys())
      .sort((a, b) => scores[b] - scores[a])
      .slice(0, n);
  const best: number[] = [];
  let floor = -Infinity;
  for (let row = 0; row < scores.length; row++) {
    const s = scores[row];
    if (best.length >= n && s <= floor) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (scores[best[mid]] >= s) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, row);
    if (best.length > n) best.pop();
    if (best.length >= n) floor = scores[best[best.length - 1]];
  }
  return best;
}
