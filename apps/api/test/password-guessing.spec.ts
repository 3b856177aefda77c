import { request as httpRequest } from 'node:http';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DEVICE_COOKIE } from '../src/auth/login-device';
import {
  LOGIN_MAX_FAILURES,
  LOGIN_WINDOW_MS,
} from '../src/auth/login-rate-limiter';
import { PasswordHasher } from '../src/auth/password-hasher';
import { OwnerCredential } from '../src/auth/schemas/owner.schema';
import {
  OWNER_PASSWORD,
  createTestApp,
  type TestApp,
} from './support/test-app';

/** A JSON POST from a chosen loopback source address (127.0.0.0/8 is all this machine). */
function post(
  url: string,
  path: string,
  body: unknown,
  localAddress = '127.0.0.1',
): Promise<{ status: number; body: { message?: unknown } }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>(
    (counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );

describe('password guessing (HTTP, embedded database)', () => {
  describe('login', () => {
    let t: TestApp;
    let url: string;
    let verify: jest.SpyInstance;

    beforeAll(async () => {
      t = await createTestApp();
      ({ url } = await t.serve());
      verify = jest.spyOn(t.app.get(PasswordHasher), 'verify');
    });
    afterAll(() => t.close());

    it('evaluates only the allowed number of 30 parallel wrong passwords; the rest get 429 unhashed', async () => {
      verify.mockClear();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          post(url, '/api/auth/login', { password: `guess number ${i}` }),
        ),
      );
      expect(tally(answers.map((a) => a.status))).toEqual({
        401: LOGIN_MAX_FAILURES,
        429: 30 - LOGIN_MAX_FAILURES,
      });
      expect(verify).toHaveBeenCalledTimes(LOGIN_MAX_FAILURES);
    });

    it('counts every loopback address as one client: another one is refused too, even with the right password', async () => {
      verify.mockClear();
      for (const address of ['127.0.0.2', '127.1.2.3']) {
        const res = await post(
          url,
          '/api/auth/login',
          { password: OWNER_PASSWORD },
          address,
        );
        expect(res.status).toBe(429);
        expect(res.body.message).toMatch(/^Too many failed login attempts\./);
      }
      expect(verify).not.toHaveBeenCalled();
    });
  });

  describe('warnings and sources', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp()));
    afterAll(() => t.close());

    it("warns from the third failure, says minutes, and keeps the owner's own device able to log in", async () => {
      // The owner's device logged in once: it carries a device cookie.
      const device = await t.owner();
      const cookie = (
        await device
          .post('/api/auth/login')
          .send({ password: OWNER_PASSWORD })
          .expect(200)
      ).headers['set-cookie'] as unknown as string[];
      expect(cookie.some((c) => c.startsWith(`${DEVICE_COOKIE}=`))).toBe(true);
      expect(cookie.find((c) => c.startsWith(`${DEVICE_COOKIE}=`))).toMatch(
        /HttpOnly.*SameSite=Strict|SameSite=Strict.*HttpOnly/,
      );

      // Guesses from elsewhere (same loopback address, no device cookie).
      const guesser = t.http();
      const answers = [];
      for (let i = 0; i < LOGIN_MAX_FAILURES; i++)
        answers.push(
          (
            await guesser
              .post('/api/auth/login')
              .send({ password: `guess-${i}-xx` })
              .expect(401)
          ).body,
        );
      expect(answers[0]).toEqual({
        statusCode: 401,
        message: 'Wrong password',
        error: 'Unauthorized',
        attemptsLeft: 4,
        lockMinutes: 15,
      });
      expect(answers[1]).not.toHaveProperty('warning');
      expect(answers[2]).toMatchObject({
        message: 'Wrong password',
        attemptsLeft: 2,
        warning: '2 tries left before a 15-minute lock.',
      });
      expect(answers[3].warning).toBe('1 try left before a 15-minute lock.');
      expect(answers[4]).toMatchObject({
        attemptsLeft: 0,
        warning: 'No tries left: logging in is locked for 15 minutes.',
      });
      const locked = await guesser
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(429);
      expect(locked.body).toMatchObject({
        message: 'Too many failed login attempts. Try again in 15 minutes.',
        retryAfterMinutes: 15,
        retryAfterSeconds: LOGIN_WINDOW_MS / 1000,
        lockScope: 'source',
      });
      expect(locked.headers['retry-after']).toBe(
        String(LOGIN_WINDOW_MS / 1000),
      );

      // A forged or copied-looking device cookie is just the address.
      await t
        .http()
        .post('/api/auth/login')
        .set('Cookie', `${DEVICE_COOKIE}=made-up.abc`)
        .send({ password: OWNER_PASSWORD })
        .expect(429);

      // The owner's device is its own source: the right password works.
      await device
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      // And its own wrong passwords count from its own zero.
      const own = await device
        .post('/api/auth/login')
        .send({ password: 'typo-typo' })
        .expect(401);
      expect(own.body.attemptsLeft).toBe(LOGIN_MAX_FAILURES - 1);

      // The guesser's lock ends with the window, said in minutes on the way.
      t.clock.advance(LOGIN_WINDOW_MS - 61_000);
      const later = await guesser
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(429);
      expect(later.body.message).toBe(
        'Too many failed login attempts. Try again in 2 minutes.',
      );
    });
  });

  describe('login before the first-run setup', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp()));
    afterAll(() => t.close());

    it('does not count attempts that checked no password against the limit', async () => {
      const { url } = await serveWithoutOwner(t);
      for (let i = 0; i < LOGIN_MAX_FAILURES + 2; i++) {
        const res = await post(url, '/api/auth/login', {
          password: 'x'.repeat(8),
        });
        expect(res.status).toBe(409);
      }
    });
  });

  describe('setup', () => {
    let t: TestApp;
    let owners: Model<OwnerCredential>;
    let hash: jest.SpyInstance;
    beforeAll(async () => {
      t = await createTestApp();
      owners = t.app.get(getModelToken(OwnerCredential.name));
      hash = jest.spyOn(t.app.get(PasswordHasher), 'hash');
    });
    afterAll(() => t.close());

    it('hashes one password of 10 parallel setups; one wins, the others get 409', async () => {
      const { url } = await serveWithoutOwner(t);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(url, '/api/auth/setup', { password: `password number ${i}` }),
        ),
      );
      expect(tally(answers.map((a) => a.status))).toEqual({ 201: 1, 409: 9 });
      expect(hash).toHaveBeenCalledTimes(1);
      expect(await owners.countDocuments()).toBe(1);
    });
  });
});

/** Listens on loopback without creating the owner (`TestApp.serve` would). */
async function serveWithoutOwner(t: TestApp): Promise<{ url: string }> {
  if (!t.app.getHttpServer().listening) await t.app.listen(0, '127.0.0.1');
  return { url: (await t.app.getUrl()).replace('[::1]', '127.0.0.1') };
}
