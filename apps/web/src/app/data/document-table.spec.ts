import { CELL_MAX_LENGTH, documentTable } from './document-table';

describe('documentTable', () => {
  it('makes one column per top-level key in first-seen order, _id first', () => {
    const table = documentTable([
      { b: 1, _id: 'x' },
      { c: 2, b: 3 },
    ]);
    expect(table.columns).toEqual(['_id', 'b', 'c']);
    expect(table.rows.map((row) => row.cells.map((cell) => cell.kind))).toEqual(
      [
        ['string', 'number', 'missing'],
        ['missing', 'number', 'number'],
      ],
    );
  });

  it('shows structured values as compact JSON with the whole value in the tooltip', () => {
    const [cell] = documentTable([{ when: { at: '2026-01-01', n: [1, 2] } }])
      .rows[0].cells;
    expect(cell).toEqual({
      text: '{"at":"2026-01-01","n":[1,2]}',
      full: '{\n  "at": "2026-01-01",\n  "n": [\n    1,\n    2\n  ]\n}',
      kind: 'object',
    });
  });

  it('shortens long text and keeps it whole in the tooltip', () => {
    const long = 'x'.repeat(CELL_MAX_LENGTH + 10);
    const [cell] = documentTable([{ note: long }]).rows[0].cells;
    expect(cell.text).toHaveLength(CELL_MAX_LENGTH);
    expect(cell.text.endsWith('…')).toBe(true);
    expect(cell.full).toBe(long);
  });

  it('has no columns and no rows for an empty page', () => {
    expect(documentTable([])).toEqual({ columns: [], rows: [] });
  });
});
