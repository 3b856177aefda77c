import { VectorTable, keyParts, vectorKey } from './vector-table';

/** A deterministic pseudo-random unit vector. */
function vector(seed: number, dims: number): Float32Array {
  let n = seed * 7919 + 1;
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) {
    n = (n * 1103515245 + 12345) % 2 ** 31;
    v[i] = n / 2 ** 31 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, x, i) => sum + x * b[i], 0);

describe('VectorTable', () => {
  const dims = 64;
  const table = new VectorTable(dims);
  const vectors = Array.from({ length: 500 }, (_, i) => vector(i, dims));
  vectors.forEach((v, i) => table.set(vectorKey('message', `m${i}`), v, i));

  it('finds the same nearest vectors as exact cosine, within the quantisation error', () => {
    const query = vector(9999, dims);
    const exact = vectors
      .map((v, i) => ({ key: `m:m${i}`, similarity: cosine(query, v) }))
      .sort((a, b) => b.similarity - a.similarity);
    const found = table.nearest(query, 10, () => true);
    expect(found).toHaveLength(10);
    for (const [i, hit] of found.entries()) {
      const truth = exact.find((e) => e.key === hit.key);
      expect(Math.abs((truth?.similarity ?? 0) - hit.similarity)).toBeLessThan(
        0.02,
      );
      expect(hit.similarity).toBeGreaterThan(exact[i].similarity - 0.03);
    }
    expect(found[0].key).toBe(exact[0].key);
  });

  it('asks accept only of the best, widening until enough pass', () => {
    const query = vectors[3];
    const onlyEven = table.nearest(
      query,
      5,
      (key) => Number(key.slice(3)) % 2 === 0,
    );
    expect(onlyEven).toHaveLength(5);
    expect(onlyEven.every((n) => Number(n.key.slice(3)) % 2 === 0)).toBe(true);
    const rare = table.nearest(query, 5, (key) => key === 'm:m499');
    expect(rare.map((n) => n.key)).toEqual(['m:m499']);
    expect(table.nearest(query, 1, () => true)[0]).toMatchObject({
      key: 'm:m3',
    });
  });

  it('forgets a deleted vector and reuses its row (counting the notes among them)', () => {
    expect(table.notes).toBe(0);
    expect(table.delete('m:m3')).toBe(true);
    expect(table.has('m:m3')).toBe(false);
    expect(
      table.nearest(vectors[3], 3, () => true).map((n) => n.key),
    ).not.toContain('m:m3');
    table.set(vectorKey('note', 'n1'), vectors[3], 42);
    expect(table.size).toBe(500);
    expect(table.textHash('n:n1')).toBe(42);
    expect(table.nearest(vectors[3], 1, () => true)[0].key).toBe('n:n1');
    expect(keyParts('n:n1')).toEqual({ kind: 'note', id: 'n1' });
    table.set(vectorKey('note', 'n1'), vectors[4], 43);
    expect(table.notes).toBe(1);
    expect(table.delete('n:n1')).toBe(true);
    expect(table.delete('n:n1')).toBe(false);
    expect(table.notes).toBe(0);
  });

  it('counts the notes among its rows (a replaced note once, a deleted one no more)', () => {
    const notes = new VectorTable(dims);
    notes.set(vectorKey('message', 'a'), vectors[0]);
    expect(notes.notes).toBe(0);
    notes.set(vectorKey('note', 'b'), vectors[1]);
    notes.set(vectorKey('note', 'b'), vectors[2]);
    notes.set(vectorKey('note', 'c'), vectors[3]);
    expect(notes.notes).toBe(2);
    expect(notes.delete('n:b')).toBe(true);
    expect(notes.delete('n:b')).toBe(false);
    expect(notes.delete('m:a')).toBe(true);
    expect(notes.notes).toBe(1);
  });

  it('refuses a vector of another size', () => {
    expect(() => table.set('m:x', new Float32Array(3))).toThrow('3 dimensions');
  });
});
