import {
  TEST_INDEX_HTML,
  createTestApp,
  type TestApp,
} from './support/test-app';

describe('the console served by the API', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('serves index.html at / without a session, revalidated on every load', async () => {
    const res = await t
      .http()
      .get('/')
      .expect(200)
      .expect('Content-Type', /html/);
    expect(res.text).toBe(TEST_INDEX_HTML);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('falls back to index.html for client-side routes', async () => {
    const res = await t.http().get('/system').expect(200);
    expect(res.text).toBe(TEST_INDEX_HTML);
  });

  it('serves hashed bundles as immutable', async () => {
    const res = await t.http().get('/main-TEST.js').expect(200);
    expect(res.headers['cache-control']).toBe(
      'public, max-age=31536000, immutable',
    );
  });

  it('answers a missing asset with 404, not with the console', async () => {
    const res = await t.http().get('/main-MISSING.js').expect(404);
    expect(res.text).not.toContain('<mt-root>');
  });

  it('never answers an API path with the console', async () => {
    const res = await t.http().get('/api/no-such-route').set('Cookie', 'x=y');
    expect(res.status).not.toBe(200);
    expect(res.text).not.toContain('<mt-root>');
    expect(res.headers['content-type']).toMatch(/json/);
  });
});
