/** The code MongoDB (and FerretDB) give a write that a unique index refused. */
export const DUPLICATE_KEY = 11000;

/** Whether `error` is a write that a unique index refused (code DUPLICATE_KEY). */
export function isDuplicateKey(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === DUPLICATE_KEY
  );
}
