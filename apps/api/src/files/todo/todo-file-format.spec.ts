import {
  matchTodoItems,
  normaliseForMatch,
  parseTodoFile,
  parseTodoLine,
  renderTodoFile,
  renderTodoLine,
} from './todo-file-format';

describe('TODO line format', () => {
  it('writes the seed line with its metadata tuples and reads it back', () => {
    const item = {
      content: 'Call the plumber about the sink',
      createdAt: '2026-02-09 10:00',
      chatId: 'wa:14155551234',
      people: ['Alice', 'Bob'],
    };
    const line = renderTodoLine(item, false);
    expect(line).toBe(
      '- [ ] [Created](2026-02-09 10:00), [ChatID](wa:14155551234), [People](Alice; Bob) | Call the plumber about the sink',
    );
    expect(parseTodoLine(line, false)).toEqual(item);
    const done = renderTodoLine({ ...item, doneAt: '2026-02-09 10:30' }, true);
    expect(done).toMatch(
      /^- \[x\] \[Created\]\(2026-02-09 10:00\), \[Done\]\(2026-02-09 10:30\), /,
    );
    expect(parseTodoLine(done, true)).toMatchObject({
      doneAt: '2026-02-09 10:30',
    });
    // An open line is not a done item and the other way round.
    expect(parseTodoLine(line, true)).toBeNull();
    expect(parseTodoLine(done, false)).toBeNull();
  });

  it('keeps one item on one line whatever the text holds', () => {
    const line = renderTodoLine(
      {
        content: 'first\nsecond | third',
        createdAt: '2026-02-09 10:00',
        people: ['Eve](x), [Done](2020-01-01 00:00'],
      },
      false,
    );
    expect(line.split('\n')).toHaveLength(1);
    const back = parseTodoLine(line, false);
    expect(back).toMatchObject({ content: 'first second | third' });
    expect(back?.doneAt).toBeUndefined();
  });

  it('renders the front matter and counts, and keeps hand-written lines', () => {
    const raw = [
      '---',
      'created_at: "2026-02-01 09:00"',
      'updated_at: "2026-02-01 09:00"',
      'open_count: 9',
      '---',
      '',
      '# TODO (open)',
      '',
      '- [ ] [Created](2026-02-01 09:00) | Water the plants',
      '- [ ] buy milk',
      'A note the owner wrote',
    ].join('\n');
    const file = parseTodoFile(raw, false);
    expect(file.createdAt).toBe('2026-02-01 09:00');
    expect(file.items.map((i) => i.content)).toEqual([
      'Water the plants',
      'buy milk',
    ]);
    expect(file.other).toEqual(['A note the owner wrote']);
    const text = renderTodoFile(
      { ...file, updatedAt: '2026-02-02 08:00' },
      false,
    );
    expect(text).toContain('open_count: 2\n');
    expect(text).toContain('updated_at: "2026-02-02 08:00"');
    expect(text).toContain('- [ ] buy milk\n');
    expect(text).toContain('A note the owner wrote\n');
    expect(parseTodoFile(text, false).items).toEqual(file.items);
  });
});

describe('TODO matching', () => {
  const items = [
    'Call the plumber about the sink',
    'Call Mom on Sunday',
    'Renew the passport',
    'Café with Zoë',
  ].map((content) => ({ content, createdAt: '2026-02-09 10:00' }));

  it('normalises case, accents and punctuation', () => {
    expect(normaliseForMatch('  CAFÉ, with   Zoë! ')).toBe('cafe with zoe');
  });

  it.each([
    ['plumber', [0]],
    ['the PASSPORT', [2]],
    ['renew passport', [2]],
    ['cafe zoe', [3]],
    ['call', [0, 1]],
    ['sink plumber', [0]],
    ['dentist', []],
    ['', []],
    ['!!!', []],
  ])('%j matches %j', (query, expected) => {
    expect(matchTodoItems(query, items)).toEqual(expected);
  });

  it('an item equal to the query wins over items that contain it', () => {
    const list = [
      { content: 'Call Mom on Sunday', createdAt: '' },
      { content: 'call mom', createdAt: '' },
    ];
    expect(matchTodoItems('Call Mom', list)).toEqual([1]);
  });
});
