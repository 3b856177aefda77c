import { formatUptime } from './format-uptime';

describe('formatUptime', () => {
  it.each([
    [0, '0 s'],
    [42, '42 s'],
    [60, '1 min'],
    [303, '5 min 3 s'],
    [3600, '1 h'],
    [3 * 3600 + 12 * 60 + 59, '3 h 12 min'],
    [86_400, '1 d'],
    [2 * 86_400 + 4 * 3600 + 30 * 60, '2 d 4 h'],
    [400 * 86_400, '400 d'],
  ])('%d s → %s', (seconds, text) => {
    expect(formatUptime(seconds)).toBe(text);
  });

  it('floors fractions and clamps nonsense to 0', () => {
    expect(formatUptime(59.9)).toBe('59 s');
    expect(formatUptime(-5)).toBe('0 s');
    expect(formatUptime(Number.NaN)).toBe('0 s');
  });
});
