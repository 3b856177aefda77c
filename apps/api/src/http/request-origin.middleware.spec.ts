import {
  decideRequestOrigin,
  mediaType,
  type RequestFacts,
  type RequestOriginPolicy,
} from './request-origin.middleware';

const policy: RequestOriginPolicy = {
  allowedHosts: ['localhost', '127.0.0.1', '::1', 'metatron.lan'],
  trustedOrigins: ['https://metatron.example'],
};

const post = (facts: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'POST',
  path: '/api/chats',
  protocol: 'http',
  host: '127.0.0.1:3000',
  origin: undefined,
  secFetchSite: undefined,
  contentType: 'application/json',
  hasBody: true,
  ...facts,
});

const statusOf = (facts: RequestFacts, p = policy) => {
  const decision = decideRequestOrigin(facts, p);
  return decision.allowed ? 'ok' : decision.status;
};

describe('decideRequestOrigin', () => {
  it.each([
    ['own origin', 'http://127.0.0.1:3000', 'ok'],
    ['another own name, same port', 'http://localhost:3000', 'ok'],
    ['IPv6 loopback, same port', 'http://[::1]:3000', 'ok'],
    ['own name from ALLOWED_HOSTS', 'http://metatron.lan:3000', 'ok'],
    ['upper-case host', 'http://LOCALHOST:3000', 'ok'],
    ['listed in TRUSTED_ORIGINS', 'https://metatron.example', 'ok'],
    [
      'listed, with its default port spelled out',
      'https://metatron.example:443',
      'ok',
    ],
    ['another port', 'http://127.0.0.1:3001', 403],
    ['no port (80)', 'http://127.0.0.1', 403],
    ['another scheme', 'https://127.0.0.1:3000', 403],
    ['a name the app does not answer to', 'http://evil.example:3000', 403],
    ['null', 'null', 403],
    ['empty', '', 403],
    ['with a path', 'http://127.0.0.1:3000/', 403],
    ['with credentials', 'http://a@127.0.0.1:3000', 403],
    ['two origins', 'http://127.0.0.1:3000, https://evil.example', 403],
    ['a listed origin over plain http', 'http://metatron.example', 403],
    ['file://', 'file://', 403],
  ])('Origin %s (%s) → %s', (_case, origin, expected) => {
    expect(statusOf(post({ origin }))).toBe(expected);
  });

  it.each([
    ['same-origin', 'ok'],
    ['none', 'ok'],
    ['Same-Origin', 'ok'],
    ['same-site', 403],
    ['cross-site', 403],
    ['garbage', 403],
  ])('Sec-Fetch-Site %s without Origin → %s', (site, expected) => {
    expect(statusOf(post({ secFetchSite: site }))).toBe(expected);
  });

  it('refuses the own origin when the browser says the request is cross-site', () => {
    expect(
      statusOf(
        post({ origin: 'http://127.0.0.1:3000', secFetchSite: 'cross-site' }),
      ),
    ).toBe(403);
  });

  it('lets a TRUSTED_ORIGINS entry be another site on purpose', () => {
    expect(
      statusOf(
        post({
          origin: 'https://metatron.example',
          secFetchSite: 'cross-site',
        }),
      ),
    ).toBe('ok');
  });

  it('with ALLOWED_HOSTS=* trusts only the origin of the Host the request came to', () => {
    const anyHost = { allowedHosts: null, trustedOrigins: [] };
    expect(
      statusOf(post({ host: 'box:3000', origin: 'http://box:3000' }), anyHost),
    ).toBe('ok');
    expect(
      statusOf(
        post({ host: 'box:3000', origin: 'http://localhost:3000' }),
        anyHost,
      ),
    ).toBe(403);
  });

  it.each(['GET', 'HEAD', 'OPTIONS', 'get'])(
    '%s is never refused (it changes nothing)',
    (method) => {
      expect(
        statusOf(
          post({
            method,
            origin: 'https://evil.example',
            secFetchSite: 'cross-site',
            contentType: 'text/plain',
          }),
        ),
      ).toBe('ok');
    },
  );

  it.each(['PUT', 'PATCH', 'DELETE', 'PROPFIND'])(
    '%s from another origin is refused',
    (method) => {
      expect(statusOf(post({ method, origin: 'https://evil.example' }))).toBe(
        403,
      );
    },
  );

  it.each([
    ['application/json', true, 'ok'],
    ['application/json; charset=utf-8', true, 'ok'],
    ['Application/JSON', true, 'ok'],
    [undefined, false, 'ok'],
    [undefined, true, 415],
    ['text/plain', true, 415],
    ['Text/Plain; charset=utf-8', true, 415],
    ['text/plain', false, 415],
    ['application/x-www-form-urlencoded', false, 415],
    ['multipart/form-data; boundary=x', true, 415],
    ['application/xml', true, 415],
    ['application/jsonp', true, 415],
  ])('Content-Type %s (body: %s) → %s', (contentType, hasBody, expected) => {
    expect(statusOf(post({ contentType, hasBody }))).toBe(expected);
  });

  it.each([
    ['POST', '/api/attachments', 'ok'],
    ['POST', '/API/Attachments/', 'ok'],
    ['PATCH', '/api/attachments', 415],
    ['POST', '/api/attachments/x', 415],
    ['POST', '/api/chats', 415],
    ['POST', '/api/backup/restore', 'ok'],
  ])('multipart on %s %s → %s', (method, path, expected) => {
    expect(
      statusOf(
        post({ method, path, contentType: 'multipart/form-data; boundary=x' }),
      ),
    ).toBe(expected);
  });

  it.each([
    ['application/gzip', '/api/backup/restore', 'ok'],
    ['application/octet-stream', '/api/backup/restore/', 'ok'],
    ['application/gzip', '/api/attachments', 415],
    ['application/octet-stream', '/api/chats', 415],
    ['text/plain', '/api/backup/restore', 415],
  ])('a raw %s body on POST %s → %s', (contentType, path, expected) => {
    expect(statusOf(post({ path, contentType }))).toBe(expected);
  });

  it('checks the origin before the body type', () => {
    expect(statusOf(post({ origin: 'null', contentType: 'text/plain' }))).toBe(
      403,
    );
  });
});

describe('mediaType', () => {
  it.each([
    ['Text/Plain; charset=utf-8', 'text/plain'],
    [' application/json ', 'application/json'],
    ['', undefined],
    [undefined, undefined],
  ])('%s → %s', (header, expected) => {
    expect(mediaType(header)).toBe(expected);
  });
});
