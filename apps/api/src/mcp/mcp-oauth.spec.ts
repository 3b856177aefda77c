import { discoveryRefusal, oauthUrlRefusal } from './mcp-oauth';

/** The endpoints discovery returns, decided without any traffic (non-loopback addresses are only ever checked here). */
describe('discoveryRefusal: where the OAuth flow may send requests', () => {
  const allow = ['127.0.0.1:8123', 'nas.local:9000'];
  const metadata = (over: Record<string, string>) => ({
    issuer: 'https://auth.example.com',
    authorization_endpoint: 'https://auth.example.com/authorize',
    token_endpoint: 'https://auth.example.com/token',
    response_types_supported: ['code'],
    ...over,
  });

  it.each([
    ['http://10.0.0.5/token', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://192.168.1.20:8123/token', 'private'],
    ['http://[::1]:8123/token', 'loopback'],
    ['http://127.0.0.2:8123/token', 'loopback'],
    ['http://localhost:8124/token', 'loopback'],
    ['http://0.0.0.0/token', ''],
    ['ftp://auth.example.com/token', ''],
  ])('a token endpoint at %s is refused', (url) => {
    const refusal = discoveryRefusal(
      {
        authorizationServerUrl: 'https://auth.example.com',
        authorizationServerMetadata: metadata({ token_endpoint: url }),
      },
      allow,
    );
    expect(refusal).toMatch(/^refused: the token endpoint/);
  });

  it.each([
    ['https://auth.example.com/token'],
    ['http://127.0.0.1:8123/token'],
    ['http://nas.local:9000/token'],
  ])(
    'a token endpoint at %s may be used (names are decided by the guarded fetch when it connects)',
    (url) => {
      expect(
        discoveryRefusal(
          {
            authorizationServerUrl: 'https://auth.example.com',
            authorizationServerMetadata: metadata({ token_endpoint: url }),
          },
          allow,
        ),
      ).toBeNull();
    },
  );

  it('checks the authorization server, the registration endpoint and the sign-in page too', () => {
    expect(
      discoveryRefusal({ authorizationServerUrl: 'http://10.1.2.3' }, allow),
    ).toMatch(/^refused: the authorization server 10\.1\.2\.3:80 is/);
    expect(
      discoveryRefusal(
        {
          authorizationServerUrl: 'https://auth.example.com',
          authorizationServerMetadata: metadata({
            registration_endpoint: 'http://172.16.0.1/register',
          }),
        },
        allow,
      ),
    ).toMatch(/^refused: the registration endpoint/);
    expect(
      discoveryRefusal(
        {
          authorizationServerUrl: 'https://auth.example.com',
          authorizationServerMetadata: metadata({
            authorization_endpoint: 'javascript:alert(1)',
          }),
        },
        allow,
      ),
    ).toBe('refused: the sign-in page is not an http(s) address');
  });

  it('says how to allow a private host, and never allows link-local', () => {
    expect(oauthUrlRefusal('http://192.168.1.20:8443/t', allow)).toContain(
      "not in this server's allowHosts",
    );
    expect(
      oauthUrlRefusal('http://169.254.169.254/', ['169.254.169.254:80']),
    ).toContain('never allowed');
  });
});
