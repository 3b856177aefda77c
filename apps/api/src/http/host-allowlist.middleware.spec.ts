import { hostnameOf } from './host-allowlist.middleware';

describe('hostnameOf', () => {
  it.each([
    ['127.0.0.1:3000', '127.0.0.1'],
    ['LocalHost:3000', 'localhost'],
    ['[::1]:3000', '::1'],
    ['metatron.lan', 'metatron.lan'],
    [undefined, ''],
  ])('%s → %s', (header, expected) => {
    expect(hostnameOf(header)).toBe(expected);
  });
});
