import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb';

/** A document an unordered insert refused, by its index in what was given. */
export interface RefusedInsert {
  index: number;
  code?: number;
  errmsg?: string;
}

/**
 * Inserts `docs` in one unordered `insert` (the embedded database stores them in one transaction)
 * and answers the documents refused one by one (a duplicate key, say), by index; the others are
 * stored. A failure that is not per document (the database away) is thrown: nothing is known to be
 * stored then.
 */
export async function insertUnordered<T extends Document>(
  collection: Collection<T>,
  docs: readonly OptionalUnlessRequiredId<T>[],
): Promise<RefusedInsert[]> {
  if (docs.length === 0) return [];
  try {
    await collection.insertMany(docs, { ordered: false });
    return [];
  } catch (error) {
    const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
    if (!writeErrors) throw error;
    return [writeErrors].flat() as RefusedInsert[];
  }
}
