import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { createServer, type Server } from 'node:http';
import { isIP, Socket, type AddressInfo } from 'node:net';
import type TestAgent from 'supertest/lib/agent';
import {
  startGreenMail,
  startRadicale,
  type GreenMailServer,
  type RadicaleServer,
} from '../../../tools/mail-servers/mail-servers';
import { AccountHostResolver } from '../src/accounts/connections/account-address';
import { AccountDoc } from '../src/accounts/schemas/account.schema';
import { createTestApp, type TestApp } from './support/test-app';

const ANN = { login: 'ann', password: 'ann-secret-pw-1' };
const CAL = { login: 'carol', password: 'carol-cal-pw-3' };

/**
 * An account's servers are reached only at addresses the accounts' guard allows,
 * decided on the resolved addresses before any connection. Host names resolve
 * through the app's injected resolver; every socket this process opens is
 * watched, and one to anything but loopback fails the test instead of leaving.
 */
describe('accounts: outbound address guard (real GreenMail and Radicale)', () => {
  let mail: GreenMailServer;
  let dav: RadicaleServer;
  let redirector: Server;
  let redirectorPort: number;
  let t: TestApp;
  let owner: TestAgent;
  let stored: Model<AccountDoc>;
  let lookups: string[] = [];
  let offLoopback: string[] = [];
  const answers: Record<string, string[]> = {
    'mail.test': ['127.0.0.1'],
    'dav.test': ['127.0.0.1'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:169.254.169.254'],
    'aws6.test': ['fd00:ec2::254'],
    'mixed.test': ['127.0.0.1', 'fe80::1'],
    'multicast.test': ['224.0.0.251'],
    'nas.test': ['192.168.1.20'],
  };
  const realConnect = Socket.prototype.connect;

  beforeAll(async () => {
    [mail, dav] = await Promise.all([
      startGreenMail([ANN]),
      startRadicale([CAL]),
    ]);
    // Sends every request to a host that resolves to the metadata service.
    redirector = createServer((req, res) => {
      res.writeHead(301, {
        location: `http://metadata.test:${redirectorPort}/caldav/`,
      });
      res.end();
    });
    await new Promise<void>((resolve) =>
      redirector.listen(0, '127.0.0.1', resolve),
    );
    redirectorPort = (redirector.address() as AddressInfo).port;
    t = await createTestApp();
    owner = await t.owner();
    stored = t.app.get<Model<AccountDoc>>(getModelToken(AccountDoc.name));
    jest
      .spyOn(t.app.get(AccountHostResolver), 'lookup')
      .mockImplementation(async (host) => {
        lookups.push(host);
        const answer = answers[host];
        if (!answer)
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), {
            code: 'ENOTFOUND',
          });
        return answer;
      });
    // The safety net: with the guard reverted, a connection to a refused address fails here, never on the network.
    jest.spyOn(Socket.prototype, 'connect').mockImplementation(function (
      this: Socket,
      ...args: unknown[]
    ) {
      // net.connect hands over its normalised [options, callback] pair.
      const first = Array.isArray(args[0]) ? args[0][0] : args[0];
      const options = (
        typeof first === 'object' && first !== null ? first : { host: args[1] }
      ) as { host?: string; path?: string };
      const host = options.host ?? 'localhost';
      const loopback =
        options.path !== undefined ||
        host === 'localhost' ||
        host === '::1' ||
        (isIP(host) === 4 && host.startsWith('127.'));
      if (!loopback) {
        offLoopback.push(host);
        throw new Error(`test refused a connection to ${host}`);
      }
      return (realConnect as (...a: unknown[]) => Socket).apply(this, args);
    });
  }, 90_000);
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
    await new Promise((resolve) => redirector?.close(resolve));
    await Promise.all([mail?.stop(), dav?.stop()]);
  });
  beforeEach(async () => {
    await stored.deleteMany({});
    lookups = [];
    offLoopback = [];
  });

  const server = (host: string, port: number) => ({
    host,
    port,
    secure: false,
    user: ANN.login,
    password: ANN.password,
  });
  const emailBody = (imapHost: string, smtpHost = '127.0.0.1') => ({
    kind: 'email',
    name: 'Personal',
    address: 'ann@example.test',
    imap: server(imapHost, mail.imapPort),
    smtp: server(smtpHost, mail.smtpPort),
  });
  const calendarBody = (url: string) => ({
    kind: 'calendar',
    name: 'Home calendar',
    url,
    user: CAL.login,
    password: CAL.password,
    secure: false,
  });

  it.each([
    [
      'metadata.test',
      "The IMAP server metadata.test (which resolves to 169.254.169.254) is refused: a cloud metadata address is never an account's server (loopback and private network addresses are allowed).",
    ],
    [
      'mapped.test',
      "The IMAP server mapped.test (which resolves to ::ffff:169.254.169.254) is refused: an IPv4-mapped IPv6 address of 169.254.169.254 (a cloud metadata address) is never an account's server (loopback and private network addresses are allowed).",
    ],
    [
      'mixed.test',
      "The IMAP server mixed.test (which resolves to fe80::1) is refused: a link-local address is never an account's server (loopback and private network addresses are allowed).",
    ],
    [
      '0xa9fea9fe',
      "The IMAP server 169.254.169.254 is refused: a cloud metadata address is never an account's server (loopback and private network addresses are allowed).",
    ],
    [
      '[::ffff:a9fe:a9fe]',
      "The IMAP server ::ffff:a9fe:a9fe is refused: an IPv4-mapped IPv6 address of 169.254.169.254 (a cloud metadata address) is never an account's server (loopback and private network addresses are allowed).",
    ],
  ])(
    'refuses an IMAP host %s with 400 before connecting, and stores nothing',
    async (host, message) => {
      for (const route of ['/api/accounts', '/api/accounts/test']) {
        const res = await owner.post(route).send(emailBody(host)).expect(400);
        expect(res.body.message).toBe(message);
      }
      expect(offLoopback).toEqual([]);
      expect(await stored.countDocuments({})).toBe(0);
    },
  );

  it('refuses the SMTP host the same way after a good IMAP login', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(emailBody('127.0.0.1', 'multicast.test'))
      .expect(400);
    expect(res.body.message).toMatch(
      /^The SMTP server multicast\.test \(which resolves to 224\.0\.0\.251\) is refused: a multicast address/,
    );
    expect(offLoopback).toEqual([]);
    expect(await stored.countDocuments({})).toBe(0);
  });

  it('connects to the one checked address of a host name (a second DNS answer cannot swap it)', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(emailBody('mail.test', 'mail.test'))
      .expect(201);
    expect(res.body.imap.host).toBe('mail.test');
    // Resolved once per connection by the guard; the libraries never asked DNS themselves (it does not know mail.test).
    expect(lookups).toEqual(['mail.test', 'mail.test']);
    expect(offLoopback).toEqual([]);
  });

  it('keeps a stored account from reaching a refused address when it is used', async () => {
    const now = new Date();
    const doc = await stored.create({
      kind: 'email',
      name: 'Restored',
      address: 'ann@example.test',
      imap: server('aws6.test', mail.imapPort),
      smtp: server('aws6.test', mail.smtpPort),
      createdAt: now,
      updatedAt: now,
    });
    const res = await owner
      .post(`/api/accounts/${doc._id.toHexString()}/test`)
      .expect(400);
    expect(res.body.message).toMatch(
      /^The IMAP server aws6\.test \(which resolves to fd00:ec2::254\) is refused: a cloud metadata address/,
    );
    expect(offLoopback).toEqual([]);
  });

  it('allows a private address (a home server), refusing only what the policy refuses', async () => {
    // nas.test resolves to 192.168.1.20: allowed, so the connection is attempted and stopped by the safety net.
    const res = await owner
      .post('/api/accounts/test')
      .send(emailBody('nas.test'))
      .expect(400);
    expect(res.body.message).not.toMatch(/is refused/);
    expect(offLoopback).toEqual(['192.168.1.20']);
  });

  it('reaches CalDAV through a host name pinned to its checked address', async () => {
    const url = dav.url.replace('127.0.0.1', 'dav.test');
    const res = await owner
      .post('/api/accounts')
      .send(calendarBody(url))
      .expect(201);
    expect(res.body.url).toContain('dav.test');
    expect(lookups.length).toBeGreaterThan(0);
    expect(new Set(lookups)).toEqual(new Set(['dav.test']));
    expect(offLoopback).toEqual([]);
  });

  it('refuses a CalDAV URL whose host resolves to a refused address', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(calendarBody(`http://metadata.test:${redirectorPort}/`))
      .expect(400);
    expect(res.body.message).toBe(
      "The CalDAV server metadata.test (which resolves to 169.254.169.254) is refused: a cloud metadata address is never an account's server (loopback and private network addresses are allowed).",
    );
    expect(offLoopback).toEqual([]);
    expect(await stored.countDocuments({})).toBe(0);
  });

  it('refuses a CalDAV redirect to a refused address, checked at every hop', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(calendarBody(`http://127.0.0.1:${redirectorPort}/dav/`))
      .expect(400);
    expect(res.body.message).toBe(
      "The CalDAV server metadata.test (which resolves to 169.254.169.254) is refused: a cloud metadata address is never an account's server (loopback and private network addresses are allowed).",
    );
    expect(lookups).toContain('metadata.test');
    expect(offLoopback).toEqual([]);
    expect(await stored.countDocuments({})).toBe(0);
  });
});
