import { describeApiError } from './api-error';

describe('describeApiError', () => {
  it('joins validation messages', () => {
    expect(
      describeApiError(
        { statusCode: 400, message: ['a is bad', 'b is bad'] },
        'x',
      ),
    ).toBe('a is bad; b is bad');
  });
  it('uses a plain message', () => {
    expect(
      describeApiError({ statusCode: 401, message: 'Wrong password' }, 'x'),
    ).toBe('Wrong password');
  });
  it('falls back when the body is not an API error', () => {
    expect(describeApiError('<html>', 'Server error')).toBe('Server error');
    expect(describeApiError({ message: '  ' }, 'Server error')).toBe(
      'Server error',
    );
    expect(describeApiError(null, 'Server error')).toBe('Server error');
  });
});
