import { createTestApp, type TestApp } from './support/test-app';

/** Routes that answer without a session; everything else must say 401. */
const OPEN_ROUTES = new Set([
  'get /api/health',
  'get /api/auth/status',
  'post /api/auth/setup',
  'post /api/auth/login',
]);

describe('access control', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('serves the Swagger UI and OpenAPI document without a session', async () => {
    await t.http().get('/api/docs/').expect(200).expect('Content-Type', /html/);
    const doc = await t.http().get('/api/docs-json').expect(200);
    expect(doc.body.info.title).toBe('MetatronOS API');
  });

  it('answers 401 on every documented route but health and auth without a session', async () => {
    const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method,
        path: path.replace(/\{[^}]+\}/g, '000000000000000000000000'),
      })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(7);
    const guarded = routes.filter(
      ({ method, path }) => !OPEN_ROUTES.has(`${method} ${path}`),
    );
    expect(guarded.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'post /api/auth/logout',
        'get /api/system',
        'get /api/events',
      ]),
    );
    // The OAuth callback is a page a provider redirects to: without the session cookie (SameSite=Strict
    // drops it on a cross-site redirect) it first reloads itself from this origin, changing nothing;
    // the reload without a session is refused.
    const callback = '/api/mcp/oauth/callback';
    const hop = await t.http().get(`${callback}?code=c&state=s`).expect(200);
    expect(hop.text).toContain(`${callback}?code=c&amp;state=s&amp;hop=1`);
    const refused = await t.http().get(`${callback}?code=c&state=s&hop=1`);
    expect(refused.status).toBe(401);
    for (const { method, path } of guarded) {
      if (path === callback) continue;
      const res = await t.http()[method as 'get'](path);
      expect({ route: `${method} ${path}`, status: res.status }).toEqual({
        route: `${method} ${path}`,
        status: 401,
      });
      expect(res.body.message).toBe('Log in to MetatronOS first');
    }
  });

  it('refuses a forged or garbage session cookie', async () => {
    await t
      .http()
      .get('/api/system')
      .set('Cookie', 'metatron_session=forged')
      .expect(401);
    await t
      .http()
      .get('/api/system')
      .set('Cookie', 'metatron_session=')
      .expect(401);
  });

  it('answers 421 to a Host name outside ALLOWED_HOSTS (DNS rebinding)', async () => {
    const res = await t
      .http()
      .post('/api/auth/setup')
      .set('Host', 'attacker.example:3000')
      .send({ password: 'rebinding!' })
      .expect(421);
    expect(res.body.message).toContain('ALLOWED_HOSTS');
    await t
      .http()
      .get('/api/auth/status')
      .expect(200, { ownerExists: false, authenticated: false });
    await t.http().get('/api/health').set('Host', 'localhost:3000').expect(200);
    await t.http().get('/api/health').set('Host', '[::1]:3000').expect(200);
  });

  it('sends security headers', async () => {
    const res = await t.http().get('/api/health').expect(200);
    expect(res.headers['content-security-policy']).toContain(
      "script-src 'self'",
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});
