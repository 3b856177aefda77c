import { DUPLICATE_KEY, isDuplicateKey } from './duplicate-key';

describe('isDuplicateKey', () => {
  it.each([
    ['a driver error with code 11000', { code: 11000 }, true],
    [
      'an Error carrying the code',
      Object.assign(new Error('E11000'), { code: DUPLICATE_KEY }),
      true,
    ],
    ['another code', { code: 11001 }, false],
    ['the code as a string', { code: '11000' }, false],
    ['no code', new Error('duplicate key'), false],
    ['null', null, false],
    ['undefined', undefined, false],
    ['a number', 11000, false],
  ])('%s → %s', (_what, error, expected) => {
    expect(isDuplicateKey(error)).toBe(expected);
  });
});
