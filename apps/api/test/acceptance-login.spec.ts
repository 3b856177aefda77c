import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PasswordHasher } from '../src/auth/password-hasher';
import { LOGIN_WINDOW_MS } from '../src/auth/login-rate-limiter';
import {
  OWNER_PASSWORD,
  createTestApp,
  type TestApp,
} from './support/test-app';

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

/** A JSON POST to the app from a chosen local (loopback) address. */
function post(
  port: number,
  host: string,
  localAddress: string,
  path: string,
  body: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = httpRequest(
      {
        host,
        port,
        localAddress,
        path,
        method: 'POST',
        headers: {
          Host: `localhost:${port}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(text),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** Listens on every address (IPv6 too when the machine has it); which loopback client spellings can reach it. */
async function listenEverywhere(t: TestApp): Promise<{
  port: number;
  clients: Array<{ host: string; localAddress: string }>;
}> {
  const server = t.app.getHttpServer();
  let ipv6 = true;
  try {
    await t.app.listen(0, '::');
  } catch {
    ipv6 = false;
    await t.app.listen(0, '127.0.0.1');
  }
  const { port } = server.address() as AddressInfo;
  const clients = [
    { host: '127.0.0.1', localAddress: '127.0.0.1' },
    { host: '127.0.0.1', localAddress: '127.0.0.2' },
    { host: '127.0.0.1', localAddress: '127.1.2.3' },
  ];
  if (ipv6) {
    const reachable = await post(port, '::1', '::1', '/api/auth/status', {})
      .then(() => true)
      .catch(() => false);
    if (reachable) clients.push({ host: '::1', localAddress: '::1' });
  }
  return { port, clients };
}

/** Issue 19 F from outside: parallel guesses from every loopback spelling, setup races, the window resetting. */
describe('acceptance: password guessing (issue 19 F)', () => {
  describe('with an owner', () => {
    let t: TestApp;
    let port: number;
    let clients: Array<{ host: string; localAddress: string }>;
    let verify: jest.SpyInstance;
    const login = (i: number, password: string) => {
      const client = clients[i % clients.length];
      return post(port, client.host, client.localAddress, '/api/auth/login', {
        password,
      });
    };

    beforeAll(async () => {
      t = await createTestApp();
      await t.owner();
      ({ port, clients } = await listenEverywhere(t));
      verify = jest.spyOn(t.app.get(PasswordHasher), 'verify');
    });
    beforeEach(() => verify.mockClear());
    afterAll(() => t.close());

    it('30 parallel wrong passwords from every loopback address get 5 password checks and 25 429s', async () => {
      expect(clients.length).toBeGreaterThanOrEqual(3);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => login(i, `guess-${i}`)),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(25);
      expect(verify).toHaveBeenCalledTimes(5);
      for (const a of answers.filter((a) => a.status === 429))
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      // The right password from yet another loopback address is refused too, without a check.
      for (let i = 0; i < clients.length; i++)
        expect((await login(i, OWNER_PASSWORD)).status).toBe(429);
      expect(verify).toHaveBeenCalledTimes(5);
    });

    it('the lock lasts until the oldest failure is 15 minutes old, then one more try each time one ages out', async () => {
      // Still locked from the test above: just before the window ends.
      t.clock.advance(LOGIN_WINDOW_MS - 1000);
      const locked = await login(0, 'guess');
      expect(locked.status).toBe(429);
      expect(Number(locked.retryAfter)).toBeLessThanOrEqual(1);
      t.clock.advance(1001);
      // The window has passed: five tries again, then locked.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => login(i, `again-${i}`)),
      );
      expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(3);
      t.clock.advance(LOGIN_WINDOW_MS + 1);
      expect((await login(1, OWNER_PASSWORD)).status).toBe(200);
    });

    it('a right password clears the count; a wrong body shape is refused without counting', async () => {
      t.clock.advance(LOGIN_WINDOW_MS + 1);
      for (let i = 0; i < 4; i++)
        expect((await login(i, 'nope')).status).toBe(401);
      for (const body of [
        { password: null },
        { password: ['x'] },
        {},
        { password: 'x'.repeat(5000) },
      ])
        expect(
          (
            await post(
              port,
              clients[0].host,
              clients[0].localAddress,
              '/api/auth/login',
              body,
            )
          ).status,
        ).toBe(400);
      expect((await login(0, OWNER_PASSWORD)).status).toBe(200);
      const after = await Promise.all(
        Array.from({ length: 6 }, (_, i) => login(i, `later-${i}`)),
      );
      expect(after.filter((a) => a.status === 401)).toHaveLength(5);
      expect(after.filter((a) => a.status === 429)).toHaveLength(1);
    });
  });

  describe('on a fresh install', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('parallel setups (and logins) from every loopback address: exactly one owner, the winner’s password', async () => {
      const { port, clients } = await listenEverywhere(t);
      const hash = jest.spyOn(t.app.get(PasswordHasher), 'hash');
      const passwords = Array.from(
        { length: 12 },
        (_, i) => `password number ${i}`,
      );
      const answers = await Promise.all([
        ...passwords.map((password, i) => {
          const c = clients[i % clients.length];
          return post(port, c.host, c.localAddress, '/api/auth/setup', {
            password,
          });
        }),
        ...clients.map((c) =>
          post(port, c.host, c.localAddress, '/api/auth/login', {
            password: 'early guess',
          }),
        ),
      ]);
      const setups = answers.slice(0, passwords.length).map((a) => a.status);
      expect(setups.filter((s) => s === 201)).toHaveLength(1);
      expect(setups.filter((s) => s === 409)).toHaveLength(
        passwords.length - 1,
      );
      expect(hash).toHaveBeenCalledTimes(1);
      // Logins before the owner existed checked nothing and cost no tries (409 or a 401 after it was set).
      for (const a of answers.slice(passwords.length))
        expect([401, 409]).toContain(a.status);
      const winner = passwords[setups.indexOf(201)];
      const c = clients[0];
      expect(
        (
          await post(port, c.host, c.localAddress, '/api/auth/login', {
            password: winner,
          })
        ).status,
      ).toBe(200);
      // Nobody can set it again.
      expect(
        (
          await post(port, c.host, c.localAddress, '/api/auth/setup', {
            password: 'another one!',
          })
        ).status,
      ).toBe(409);
    });
  });
});
