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
/** Characters joined into one write: small, so little text survives a young-generation GC (each copies what lives). */
const WRITE_CHARS = 1 << 16;

/** The snapshot without its index part (`mini`), which the writer makes from MiniSearch itself. */
export type SnapshotHead = Omit<IndexSnapshot, 'mini'>;

/**
 * The snapshot's JSON in pieces of about a megabyte, made a slice of a few milliseconds at a
 * time with a yield to the event loop between slices: `JSON.stringify` of the whole index (and
 * MiniSearch's `toJSON` before it) held the loop for one to three seconds at 100,000 messages.
 * The same JSON as `JSON.stringify({ ...head, mini: toJSON() })` with the documents not in
 * `keep` (the notes) left out, as if never added: `MiniSearch.loadJS` reads it unchanged.
 * The caller keeps the index still until the last piece (its writes are held meanwhile).
 */
export async function* snapshotPieces(
  head: SnapshotHead,
  mini: MiniSearch<{ id: number; text: string }>,
  keep: (externalId: unknown) => boolean,
): AsyncGenerator<string> {
  const index = mini as unknown as MiniSearchInternals;
  let buffer: string[] = [];
  let size = 0;
  let sliceStart = performance.now();
  const push = (piece: string): void => {
    buffer.push(piece);
    size += piece.length;
  };
  const due = (): boolean => performance.now() - sliceStart > SLICE_MS;
  const breathe = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  const flush = function* (force: boolean): Generator<string> {
    if (!size || (!force && size < WRITE_CHARS)) return;
    const out = buffer.join('');
    buffer = [];
    size = 0;
    yield out;
  };

  const { messages, ...rest } = head;
  push(JSON.stringify(rest).slice(0, -1));
  push(',"messages":{');
  const arrays = Object.entries(messages) as Array<[string, unknown[]]>;
  for (const [i, [name, values]] of arrays.entries()) {
    push(`${i ? ',' : ''}${JSON.stringify(name)}:[`);
    for (let from = 0; from < values.length; from += 10_000) {
      const part = JSON.stringify(values.slice(from, from + 10_000));
      push(`${from ? ',' : ''}${part.slice(1, -1)}`);
      if (due()) {
        yield* flush(false);
        await breathe();
      }
    }
    push(']');
  }
  push('}');

  // The documents kept: their short ids, and the field lengths they take off the averages.
  const dropped = new Set<number>();
  const fields = index._avgFieldLength.length;
  const droppedLength = new Array<number>(fields).fill(0);
  let seen = 0;
  for (const [shortId, externalId] of index._documentIds) {
    if (!keep(externalId)) {
      dropped.add(shortId);
      const lengths = index._fieldLength.get(shortId) ?? [];
      for (let f = 0; f < fields; f++) droppedLength[f] += lengths[f] ?? 0;
    }
    if (++seen % 4096 === 0 && due()) {
      yield* flush(false);
      await breathe();
    }
  }
  const before = index._documentCount;
  const after = before - dropped.size;
  const averages = dropped.size
    ? index._avgFieldLength.map((avg, f) =>
        after > 0 ? (avg * before - droppedLength[f]) / after : 0,
      )
    : index._avgFieldLength;

  push(
    `,"mini":{"documentCount":${after},"nextId":${index._nextId},"documentIds":{`,
  );
  yield* mapEntries(index._documentIds);
  push(`},"fieldIds":${JSON.stringify(index._fieldIds)},"fieldLength":{`);
  yield* mapEntries(index._fieldLength);
  push(`},"averageFieldLength":${JSON.stringify(averages)},"storedFields":{`);
  yield* mapEntries(index._storedFields);
  push(`},"dirtCount":${index._dirtCount},"index":[`);
  let first = true;
  for (const [term, fieldIndex] of index._index) {
    let data = '';
    for (const [fieldId, freqs] of fieldIndex) {
      let postings = '';
      let n = 0;
      for (const [shortId, freq] of freqs) {
        if (!dropped.has(shortId))
          postings += `${postings ? ',' : ''}"${shortId}":${freq}`;
        // A common word has a posting in most documents: a slice may end inside it.
        if (++n % 2048 === 0 && due()) {
          yield* flush(false);
          await breathe();
        }
      }
      if (postings) data += `${data ? ',' : ''}"${fieldId}":{${postings}}`;
    }
    if (data) {
      push(`${first ? '' : ','}[${JSON.stringify(term)},{${data}}]`);
      first = false;
    }
    if (due()) {
      yield* flush(false);
      await breathe();
    }
  }
  push('],"serializationVersion":2}}');
  yield* flush(true);

  async function* mapEntries(
    map: Map<number, unknown>,
  ): AsyncGenerator<string> {
    let firstEntry = true;
    let n = 0;
    for (const [shortId, value] of map) {
      if (dropped.has(shortId)) continue;
      // As JSON.stringify of the object toJSON makes: an undefined value is left out.
      if (value === undefined) continue;
      push(`${firstEntry ? '' : ','}"${shortId}":${JSON.stringify(value)}`);
      firstEntry = false;
      if (++n % 1024 === 0 && due()) {
        yield* flush(false);
        await breathe();
      }
    }
  }
}
