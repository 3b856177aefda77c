import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import {
  LOGIN_MAX_FAILURES,
  LOGIN_WINDOW_MS,
} from '../src/auth/login-rate-limiter';
import { AuthSession } from '../src/auth/schemas/session.schema';
import { OwnerCredential } from '../src/auth/schemas/owner.schema';
import {
  OWNER_PASSWORD,
  createTestApp,
  type TestApp,
} from './support/test-app';

describe('owner auth (HTTP, embedded database)', () => {
  let t: TestApp;
  let owners: Model<OwnerCredential>;
  let sessions: Model<AuthSession>;

  beforeAll(async () => {
    t = await createTestApp();
    owners = t.app.get(getModelToken(OwnerCredential.name));
    sessions = t.app.get(getModelToken(AuthSession.name));
  });
  afterAll(() => t.close());

  describe('first run', () => {
    it('reports that no owner exists', async () => {
      await t
        .http()
        .get('/api/auth/status')
        .expect(200, { ownerExists: false, authenticated: false });
    });

    it.each([
      [
        'a short password',
        { password: 'short' },
        ['password must be at least 8 characters'],
      ],
      [
        'no password',
        {},
        ['password must be at least 8 characters', 'password must be a string'],
      ],
      [
        'a number',
        { password: 12345678 },
        ['password must be at least 8 characters', 'password must be a string'],
      ],
      [
        'an unknown field',
        { password: 'long enough', admin: true },
        ['property admin should not exist'],
      ],
    ])(
      'refuses %s with 400 naming the field, and writes nothing',
      async (_case, body, messages) => {
        const res = await t
          .http()
          .post('/api/auth/setup')
          .send(body)
          .expect(400);
        expect(res.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message: expect.arrayContaining(messages),
        });
        expect(await owners.countDocuments()).toBe(0);
      },
    );

    it('refuses malformed JSON with 400', async () => {
      const res = await t
        .http()
        .post('/api/auth/setup')
        .set('Content-Type', 'application/json')
        .send('{"password":')
        .expect(400);
      expect(res.body.statusCode).toBe(400);
      expect(await owners.countDocuments()).toBe(0);
    });

    it('refuses login before an owner exists', async () => {
      const res = await t
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(409);
      expect(res.body.message).toBe(
        'No owner password is set yet; complete the first-run setup.',
      );
    });

    it('sets the password, stores only a slow hash, and logs in with a strict HttpOnly cookie', async () => {
      const agent = t.http();
      const res = await agent
        .post('/api/auth/setup')
        .send({ password: OWNER_PASSWORD })
        .expect(201);
      expect(res.body).toEqual({ ownerExists: true, authenticated: true });
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).toMatch(
        /^metatron_session=[\w-]{43}; Path=\/; Expires=.+; HttpOnly; SameSite=Strict$/,
      );

      const stored = await owners.findOne().lean();
      expect(stored?.passwordHash).toMatch(/^scrypt\$/);
      expect(JSON.stringify(stored)).not.toContain(OWNER_PASSWORD);
      // The session row holds a hash of the token, never the token itself.
      const token = /metatron_session=([\w-]+)/.exec(cookie)?.[1] as string;
      expect(await sessions.countDocuments({ _id: token })).toBe(0);
      expect(await sessions.countDocuments()).toBe(1);

      await agent
        .get('/api/auth/status')
        .expect(200, { ownerExists: true, authenticated: true });
      await agent.get('/api/system').expect(200);
    });

    it('refuses a second setup with 409 and keeps the first password', async () => {
      const res = await t
        .http()
        .post('/api/auth/setup')
        .send({ password: 'another password' })
        .expect(409);
      expect(res.body.message).toBe(
        'The owner password is already set; log in instead.',
      );
      await t
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
    });
  });

  describe('login and logout', () => {
    it('refuses a wrong password with 401 and sets no cookie', async () => {
      const res = await t
        .http()
        .post('/api/auth/login')
        .send({ password: 'not the password' })
        .expect(401);
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Wrong password',
        attemptsLeft: LOGIN_MAX_FAILURES - 1,
        lockMinutes: 15,
      });
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('ends the session on the server at logout: the old cookie stops working', async () => {
      const agent = t.http();
      const login = await agent
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      const cookie = String(login.headers['set-cookie']).split(';')[0];
      await t.http().get('/api/system').set('Cookie', cookie).expect(200);

      const logout = await agent.post('/api/auth/logout').expect(204);
      expect(String(logout.headers['set-cookie'])).toMatch(
        /^metatron_session=; Path=\/; Expires=Thu, 01 Jan 1970/,
      );
      await t.http().get('/api/system').set('Cookie', cookie).expect(401);
      await t
        .http()
        .get('/api/auth/status')
        .set('Cookie', cookie)
        .expect(200, { ownerExists: true, authenticated: false });
    });

    it('refuses logout without a session', async () => {
      await t.http().post('/api/auth/logout').expect(401);
    });

    it('expires sessions after SESSION_TTL_DAYS', async () => {
      const agent = t.http();
      await agent
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      t.clock.advance(t.config.sessionTtlDays * 24 * 3600 * 1000 - 1000);
      await agent.get('/api/system').expect(200);
      t.clock.advance(2000);
      await agent.get('/api/system').expect(401);
    });

    it('ends a session at its expiry to the second even while it is remembered as checked', async () => {
      const agent = t.http();
      await agent
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      // Checked against the database 10 s before the end: remembered for the next minute, not past the expiry.
      t.clock.advance(t.config.sessionTtlDays * 24 * 3600 * 1000 - 10_000);
      await agent.get('/api/system').expect(200);
      t.clock.advance(9_000);
      await agent.get('/api/system').expect(200);
      t.clock.advance(2_000);
      await agent.get('/api/system').expect(401);
      await agent.get('/api/chats').expect(401);
    });

    it('rate-limits failed logins per address, even refusing the right password, until the window passes', async () => {
      for (let i = 0; i < LOGIN_MAX_FAILURES; i++) {
        await t
          .http()
          .post('/api/auth/login')
          .send({ password: `wrong ${i}` })
          .expect(401);
      }
      const limited = await t
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(429);
      expect(limited.body.message).toMatch(
        /^Too many failed login attempts\. Try again in \d+ minutes?\.$/,
      );
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['set-cookie']).toBeUndefined();

      t.clock.advance(LOGIN_WINDOW_MS + 1000);
      await t
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
    });
  });
});

describe('COOKIE_SECURE=always (behind an HTTPS proxy)', () => {
  let t: TestApp;
  beforeAll(
    async () => (t = await createTestApp({ env: { COOKIE_SECURE: 'always' } })),
  );
  afterAll(() => t.close());

  it('marks the session cookie Secure even on a plain HTTP request', async () => {
    const res = await t
      .http()
      .post('/api/auth/setup')
      .send({ password: OWNER_PASSWORD })
      .expect(201);
    expect(String(res.headers['set-cookie'])).toMatch(
      /; HttpOnly; Secure; SameSite=Strict$/,
    );
  });
});
