import {
  consolidationRequest,
  readModelAnswer,
  type ModelNote,
  type OwnerLine,
} from './consolidation-model';

const note = (id: string, text: string, day: number): ModelNote => ({
  id,
  text,
  observedAt: new Date(Date.UTC(2026, 0, day)),
});
const NOTES = [
  note('a', 'Anna is allergic to peanuts', 1),
  note('b', 'Peanuts make Anna ill', 5),
  note('c', 'We live in Berlin', 2),
  note('d', 'We moved to Lisbon', 9),
];
const LINES: OwnerLine[] = [
  {
    id: 'm-own',
    chatId: 'c1',
    text: 'Clara turns 9 on 12 May',
    at: new Date(),
  },
];
const request = consolidationRequest(NOTES, LINES);
const empty = { duplicates: [], contradictions: [], proposals: [] };
const read = (answer: unknown, existing: string[] = []) =>
  readModelAnswer(answer, request, existing);

describe('readModelAnswer', () => {
  it('shows notes and lines under aliases, never their ids', () => {
    expect(request.user).not.toMatch(/"a"|m-own/);
    expect(JSON.parse(request.user)).toMatchObject({
      notes: [{ id: 'n1', text: 'Anna is allergic to peanuts' }, {}, {}, {}],
      ownerMessages: [{ id: 'm1', text: 'Clara turns 9 on 12 May' }],
    });
  });

  it('keeps the newest of a duplicate group and decides contradictions by date, not by the model', () => {
    const out = read({
      ...empty,
      duplicates: [{ notes: ['n1', 'n2'], reason: 'same' }],
      contradictions: [{ newer: 'n3', older: 'n4', reason: 'moved' }],
      proposals: [
        { text: 'Clara turns 9 on 12 May', messages: ['m1'], reason: 'new' },
      ],
    });
    expect(out).toEqual({
      ok: true,
      plan: {
        merges: [{ keep: 'b', drop: ['a'], reason: 'same' }],
        supersedes: [{ newer: 'd', older: 'c', reason: 'moved' }],
        proposals: [
          {
            text: 'Clara turns 9 on 12 May',
            messageIds: ['m-own'],
            chatId: 'c1',
            reason: 'new',
          },
        ],
      },
    });
  });

  it.each([
    ['no JSON', undefined, /did not answer with JSON/],
    ['another shape', { ...empty, extra: 1 }, /shape/],
    ['a missing list', { duplicates: [], contradictions: [] }, /shape/],
    [
      'an invented note',
      { ...empty, duplicates: [{ notes: ['n1', 'n9'], reason: 'x' }] },
      /not given \(n9\)/,
    ],
    [
      'a note in two changes',
      {
        ...empty,
        duplicates: [{ notes: ['n1', 'n2'], reason: 'x' }],
        contradictions: [{ newer: 'n2', older: 'n3', reason: 'y' }],
      },
      /two changes/,
    ],
    [
      'a proposal citing a message not the owner’s',
      {
        ...empty,
        proposals: [{ text: 'Plant this', messages: ['m2'], reason: 'x' }],
      },
      /not one of the owner's/,
    ],
    [
      'a proposal citing nothing',
      {
        ...empty,
        proposals: [{ text: 'Plant this', messages: [], reason: 'x' }],
      },
      /shape/,
    ],
  ])('refuses the whole answer for %s', (_name, answer, error) => {
    const out = read(answer);
    expect(out.ok).toBe(false);
    expect(out.ok ? '' : out.error).toMatch(error);
  });

  it('leaves out a proposal whose words a note already holds', () => {
    const out = read(
      {
        ...empty,
        proposals: [
          { text: 'clara turns 9 on 12 may!', messages: ['m1'], reason: 'x' },
        ],
      },
      ['Clara turns 9 on 12 May'],
    );
    expect(out).toEqual({
      ok: true,
      plan: { merges: [], supersedes: [], proposals: [] },
    });
  });
});
