import { HOME_URL, loginQueryParams, safeReturnUrl } from './return-url';

describe('safeReturnUrl', () => {
  it('keeps in-app paths with query and fragment', () => {
    expect(safeReturnUrl('/system')).toBe('/system');
    expect(safeReturnUrl('/system?tab=db#x')).toBe('/system?tab=db#x');
  });

  it('falls back to the home page for missing, foreign or looping targets', () => {
    for (const bad of [
      undefined,
      null,
      '',
      'system',
      'https://evil.example/',
      '//evil.example',
      '/\\evil.example',
      '/',
      '/login',
      '/login?returnUrl=/x',
      '/setup',
    ]) {
      expect(safeReturnUrl(bad)).toBe(HOME_URL);
    }
  });
});

describe('loginQueryParams', () => {
  it('remembers pages other than the home page', () => {
    expect(loginQueryParams('/other?x=1')).toEqual({ returnUrl: '/other?x=1' });
    expect(loginQueryParams(HOME_URL)).toEqual({});
    expect(loginQueryParams('/login')).toEqual({});
  });
});
