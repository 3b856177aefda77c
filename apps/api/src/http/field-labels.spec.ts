import { fieldLabel, inPlainWords } from './field-labels';

describe('field labels', () => {
  it.each([
    ['telegramBotToken', 'Telegram bot token'],
    ['openaiApiKey', 'OpenAI API key'],
    ['braveApiKey', 'Brave Search API key'],
    ['baseUrl', 'Base URL'],
    ['apiKey', 'API key'],
    ['pulsesPerDay', 'Pulses per day'],
    ['openaiCompatible.0.baseUrl', 'OpenAI-compatible endpoint #1 base URL'],
    ['quietHours.1.start', 'Quiet hours #2 start'],
    ['imap.port', 'IMAP port'],
    ['budget.dailyUsd', 'Budget daily USD'],
    ['title', 'title'],
    ['limit', 'limit'],
  ])('%s → %s', (path, label) => {
    expect(fieldLabel(path)).toBe(label);
  });

  it('changes only a message that starts with its own field', () => {
    expect(
      inPlainWords('telegramBotToken must be a string', 'telegramBotToken'),
    ).toBe('Telegram bot token must be a string');
    expect(inPlainWords('property fooBar should not exist', 'fooBar')).toBe(
      'property fooBar should not exist',
    );
    expect(inPlainWords('title must be a string', 'title')).toBe(
      'title must be a string',
    );
    expect(
      inPlainWords('Use a key like telegramBotToken here', 'telegramBotToken'),
    ).toBe('Use a key like telegramBotToken here');
  });
});
