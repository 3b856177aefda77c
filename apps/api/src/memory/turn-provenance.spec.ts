import { sourceOfMessage, turnThirdPartySource } from './turn-provenance';

describe('turnThirdPartySource', () => {
  it.each([
    [[], null],
    [[{ name: 'set_mode', result: '{}' }], null],
    [[{ name: 'url_fetch', result: '{}' }], 'web'],
    [[{ name: 'web_search', result: '{}' }], 'web'],
    [[{ name: 'email_actions', result: '{}' }], 'email'],
    [[{ name: 'whatsapp_read_messages', result: '[]' }], 'contact'],
    [[{ name: 'db_query', result: '[]' }], 'tool'],
    [[{ name: 'some_new_tool', result: '' }], 'tool'],
    [[{ name: 'todo_update', result: '{}', taint: { by: 'x' } }], 'tool'],
    [[{ name: 'memory_search', result: '{"results":[]}' }], null],
    [
      [
        {
          name: 'memory_search',
          result: '{"results":[{"kind":"message","source":"contact"}]}',
        },
      ],
      'contact',
    ],
  ])('%j → %s', (calls, expected) => {
    expect(turnThirdPartySource(calls)).toBe(expected);
  });
});

describe('sourceOfMessage', () => {
  it('only the owner’s own user messages are the owner’s words', () => {
    expect(sourceOfMessage({ role: 'user' })).toBe('owner');
    expect(sourceOfMessage({ role: 'assistant' })).toBe('tool');
    expect(sourceOfMessage({ role: 'user', trigger: 'cron' })).toBe('tool');
    expect(
      sourceOfMessage({
        role: 'user',
        author: { kind: 'contact', channel: 'whatsapp', name: 'Eve' },
      }),
    ).toBe('contact');
  });
});
