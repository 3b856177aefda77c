/** The longest text a table cell shows; the whole value is in its tooltip and in the JSON view. */
export const CELL_MAX_LENGTH = 120;

export interface DocumentTableCell {
  /** What the cell shows (shortened). */
  text: string;
  /** The whole value when `text` is shortened or structured, for the tooltip. */
  full: string | null;
  kind: 'string' | 'number' | 'boolean' | 'null' | 'object' | 'missing';
}

export interface DocumentTable {
  columns: string[];
  rows: { key: string; cells: DocumentTableCell[] }[];
}

/**
 * A page of documents as a table: one column per top-level key (in the order they first appear, `_id`
 * first), one row per document. A key a document lacks is an empty cell; objects and arrays show as
 * compact JSON.
 */
export function documentTable(
  documents: readonly Record<string, unknown>[],
): DocumentTable {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const document of documents) {
    for (const key of Object.keys(document)) {
      if (seen.has(key)) continue;
      seen.add(key);
      columns.push(key);
    }
  }
  const idAt = columns.indexOf('_id');
  if (idAt > 0) columns.unshift(...columns.splice(idAt, 1));
  return {
    columns,
    rows: documents.map((document, index) => {
      const id = document['_id'];
      return {
        key: `${index}:${typeof id === 'string' || typeof id === 'number' ? id : ''}`,
        cells: columns.map((column) =>
          Object.prototype.hasOwnProperty.call(document, column)
            ? cellOf(document[column])
            : { text: '', full: null, kind: 'missing' },
        ),
      };
    }),
  };
}

function cellOf(value: unknown): DocumentTableCell {
  if (value === null || value === undefined)
    return { text: 'null', full: null, kind: 'null' };
  if (typeof value === 'string') return shorten(value, 'string');
  if (typeof value === 'number' || typeof value === 'bigint')
    return { text: String(value), full: null, kind: 'number' };
  if (typeof value === 'boolean')
    return { text: String(value), full: null, kind: 'boolean' };
  const json = JSON.stringify(value) ?? String(value);
  const cell = shorten(json, 'object');
  return { ...cell, full: JSON.stringify(value, null, 2) };
}

function shorten(
  text: string,
  kind: DocumentTableCell['kind'],
): DocumentTableCell {
  return text.length > CELL_MAX_LENGTH
    ? { text: `${text.slice(0, CELL_MAX_LENGTH - 1)}…`, full: text, kind }
    : { text, full: null, kind };
}
