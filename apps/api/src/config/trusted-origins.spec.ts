import { ConfigError, loadAppConfig } from './app-config';

describe('TRUSTED_ORIGINS', () => {
  it('is empty by default', () => {
    expect(loadAppConfig({}).trustedOrigins).toEqual([]);
  });

  it('reads comma-separated origins in their canonical form', () => {
    expect(
      loadAppConfig({
        TRUSTED_ORIGINS:
          ' https://Metatron.example/ , http://192.0.2.10:8080,https://metatron.example:443,',
      }).trustedOrigins,
    ).toEqual(['https://metatron.example', 'http://192.0.2.10:8080']);
  });

  it.each([
    '*',
    'null',
    'metatron.example',
    'ftp://metatron.example',
    'https://metatron.example/console',
    'https://metatron.example?x=1',
    'https://user@metatron.example',
    'https://',
  ])('refuses "%s" at boot, naming the variable', (value) => {
    expect(() => loadAppConfig({ TRUSTED_ORIGINS: value })).toThrow(
      ConfigError,
    );
    expect(() => loadAppConfig({ TRUSTED_ORIGINS: value })).toThrow(
      /TRUSTED_ORIGINS must be comma-separated origins/,
    );
  });
});
