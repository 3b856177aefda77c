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
 * Every embedding of one model in memory, one row each of a contiguous Int8Array: a
 * unit vector quantised by its own scale (largest component → 127). 100,000 vectors of
 * 256 dimensions take 26 MB here (Float32 would take 102), and a brute-force scan over
 * them is a few tens of milliseconds. The query stays Float32, so only the stored side
 * loses precision (about 0.5% of a similarity).
 */
export class VectorTable {
  private rows = new Int8Array(0);
  private scales = new Float32Array(0);
  private hashes = new Uint32Array(0);
  private keys: Array<VectorKey | undefined> = [];
  private readonly rowOf = new Map<VectorKey, number>();
  private readonly free: number[] = [];
  private next = 0;

  constructor(readonly dimensions: number) {}

  get size(): number {
    return this.rowOf.size;
  }

  has(key: VectorKey): boolean {
    return this.rowOf.has(key);
  }

  /** The hash of the text the key's vector was made from (0 when unknown). */
  textHash(key: VectorKey): number | undefined {
    const row = this.rowOf.get(key);
    return row === undefined ? undefined : this.hashes[row];
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
    }
    let norm = 0;
    let max = 0;
    for (let i = 0; i < vector.length; i++) {
      norm += vector[i] * vector[i];
      max = Math.max(max, Math.abs(vector[i]));
    }
    norm = Math.sqrt(norm) || 1;
    const scale = max / norm / 127 || 1;
    const base = row * this.dimensions;
    for (let i = 0; i < vector.length; i++)
      this.rows[base + i] = Math.round(vector[i] / norm / scale);
    this.scales[row] = scale;
    this.hashes[row] = textHash;
  }

  delete(key: VectorKey): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    this.rowOf.delete(key);
    this.keys[row] = undefined;
    this.scales[row] = 0;
    this.rows.fill(0, row * this.dimensions, (row + 1) * this.dimensions);
    this.free.push(row);
    return true;
  }

  keyList(): IterableIterator<VectorKey> {
    return this.rowOf.keys();
  }

  /**
   * The most similar vectors to `query` that `accept` lets through, best first, at
   * most `limit`. Every row is scored (a plain loop over the Int8Array); the best are
   * kept in a small sorted buffer, and `accept` is asked only of those, widening the
   * buffer when too few pass (a narrow date range, a hidden chat).
   */
  nearest(
    query: Float32Array,
    limit: number,
    accept: (key: VectorKey) => boolean,
  ): Neighbour[] {
    if (query.length !== this.dimensions || !this.rowOf.size || limit < 1)
      return [];
    const dims = this.dimensions;
    const count = this.next;
    const scores = new Float32Array(count);
    const rows = this.rows;
    for (let row = 0, base = 0; row < count; row++, base += dims) {
      const scale = this.scales[row];
      if (scale === 0) {
        scores[row] = -Infinity;
        continue;
      }
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += rows[base + i] * query[i];
      scores[row] = dot * scale;
    }
    for (let want = limit * 4 + 16; ; want *= 4) {
      const top = topRows(scores, Math.min(want, count));
      const out: Neighbour[] = [];
      for (const row of top) {
        if (scores[row] === -Infinity) break;
        const key = this.keys[row] as VectorKey;
        if (!accept(key)) continue;
        out.push({ key, similarity: scores[row] });
        if (out.length >= limit) return out;
      }
      if (want >= count) return out;
    }
  }

  private grow(size: number): void {
    if (size <= this.scales.length) return;
    const length = Math.max(size, this.scales.length * 2, 1024);
    const rows = new Int8Array(length * this.dimensions);
    rows.set(this.rows);
    const scales = new Float32Array(length);
    scales.set(this.scales);
    const hashes = new Uint32Array(length);
    hashes.set(this.hashes);
    this.rows = rows;
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
