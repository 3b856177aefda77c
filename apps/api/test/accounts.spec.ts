import type { AccountView, AppEventMap } from '@metatronos/shared-types';
import { PASSWORD_MASK } from '@metatronos/shared-types';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  freePort,
  startGreenMail,
  startRadicale,
  type GreenMailServer,
  type RadicaleServer,
} from '../../../tools/mail-servers/mail-servers';
import { AccountDoc } from '../src/accounts/schemas/account.schema';
import { AppEventBus } from '../src/events/app-event-bus';
import { createTestApp, type TestApp } from './support/test-app';

const ANN = { login: 'ann', password: 'ann-secret-pw-1' };
const BOB = { login: 'bob', password: 'bob-secret-pw-2' };
const CAL = { login: 'carol', password: 'carol-cal-pw-3' };

describe('/api/accounts (real GreenMail and Radicale)', () => {
  let mail: GreenMailServer;
  let dav: RadicaleServer;
  let t: TestApp;
  let owner: TestAgent;
  let stored: Model<AccountDoc>;
  const changes: AppEventMap['accounts.changed'][] = [];

  beforeAll(async () => {
    [mail, dav] = await Promise.all([
      startGreenMail([ANN, BOB]),
      startRadicale([CAL]),
    ]);
    t = await createTestApp();
    owner = await t.owner();
    stored = t.app.get<Model<AccountDoc>>(getModelToken(AccountDoc.name));
    t.app.get(AppEventBus).on('accounts.changed', (e) => changes.push(e));
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([mail?.stop(), dav?.stop()]);
  });
  beforeEach(async () => {
    await stored.deleteMany({});
    changes.length = 0;
  });

  const server = (
    user: { login: string; password: string },
    port: number,
    extra: object = {},
  ) => ({
    host: '127.0.0.1',
    port,
    secure: false,
    user: user.login,
    password: user.password,
    ...extra,
  });
  const emailBody = (extra: object = {}) => ({
    kind: 'email',
    name: 'Personal',
    address: 'ann@example.test',
    imap: server(ANN, mail.imapPort),
    smtp: server(ANN, mail.smtpPort),
    ...extra,
  });
  const calendarBody = (extra: object = {}) => ({
    kind: 'calendar',
    name: 'Home calendar',
    url: dav.url,
    user: CAL.login,
    password: CAL.password,
    secure: false,
    ...extra,
  });
  const count = () => stored.countDocuments({});
  const noSecretIn = (body: unknown) => {
    const text = JSON.stringify(body);
    for (const secret of [
      ANN.password,
      BOB.password,
      CAL.password,
      'wrong-pw-xyz',
    ])
      expect(text).not.toContain(secret);
  };

  it('needs the owner session on every route', async () => {
    for (const [method, path] of [
      ['get', '/api/accounts'],
      ['get', '/api/accounts/presets'],
      ['post', '/api/accounts'],
      ['post', '/api/accounts/test'],
      ['patch', '/api/accounts/0123456789abcdef01234567'],
      ['delete', '/api/accounts/0123456789abcdef01234567'],
    ] as const)
      await t.http()[method](path).send({}).expect(401);
  });

  it('adds an email account after testing IMAP and SMTP, and never shows its passwords', async () => {
    const res = await owner.post('/api/accounts').send(emailBody()).expect(201);
    const view = res.body as AccountView;
    expect(view).toMatchObject({
      kind: 'email',
      name: 'Personal',
      address: 'ann@example.test',
      imap: {
        host: '127.0.0.1',
        port: mail.imapPort,
        secure: false,
        user: 'ann',
        password: PASSWORD_MASK,
      },
      smtp: { port: mail.smtpPort, password: PASSWORD_MASK },
    });
    noSecretIn(res.body);
    const list = await owner.get('/api/accounts').expect(200);
    expect(list.body).toHaveLength(1);
    noSecretIn(list.body);
    noSecretIn((await owner.get(`/api/accounts/${view.id}`).expect(200)).body);
    // Stored with the password, for the code that connects.
    const doc = await stored.findById(view.id).lean();
    expect(doc?.imap?.password).toBe(ANN.password);
    expect(changes).toEqual([
      expect.objectContaining({ id: view.id, change: 'created' }),
    ]);
  });

  it('refuses a wrong IMAP password with 400 naming the problem, and stores nothing', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(
        emailBody({
          imap: server(
            { login: 'ann', password: 'wrong-pw-xyz' },
            mail.imapPort,
          ),
        }),
      )
      .expect(400);
    expect(res.body.message).toMatch(
      new RegExp(
        `^IMAP login failed for 'ann' at 127\\.0\\.0\\.1:${mail.imapPort}: wrong user name or password`,
      ),
    );
    noSecretIn(res.body);
    expect(await count()).toBe(0);
    expect(changes).toEqual([]);
  });

  it('says so in whole words even when the wrong password is one of them', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(
        emailBody({
          imap: server({ login: 'ann', password: 'wrong' }, mail.imapPort),
        }),
      )
      .expect(400);
    expect(res.body.message).toMatch(
      new RegExp(
        `^IMAP login failed for 'ann' at 127\\.0\\.0\\.1:${mail.imapPort}: wrong user name or password \\(`,
      ),
    );
    expect(await count()).toBe(0);
  });

  it('refuses a wrong SMTP password after a good IMAP login', async () => {
    const res = await owner
      .post('/api/accounts')
      .send(
        emailBody({
          smtp: server(
            { login: 'ann', password: 'wrong-pw-xyz' },
            mail.smtpPort,
          ),
        }),
      )
      .expect(400);
    expect(res.body.message).toMatch(/^SMTP login failed for 'ann'/);
    noSecretIn(res.body);
    expect(await count()).toBe(0);
  });

  it('refuses an unreachable server with 400 and stores nothing', async () => {
    const closed = await freePort();
    const res = await owner
      .post('/api/accounts')
      .send(emailBody({ imap: server(ANN, closed) }))
      .expect(400);
    expect(res.body.message).toBe(
      `Cannot reach the IMAP server 127.0.0.1:${closed}: connection refused.`,
    );
    expect(await count()).toBe(0);
  });

  it('uses TLS unless secure: false is chosen explicitly', async () => {
    const { secure: _secure, ...noTls } = server(ANN, mail.imapPort);
    const res = await owner
      .post('/api/accounts')
      .send(emailBody({ imap: noTls }))
      .expect(400);
    // GreenMail's test port speaks plain IMAP, so a TLS handshake cannot succeed.
    expect(res.body.message).toBe(
      `TLS with the IMAP server 127.0.0.1:${mail.imapPort} failed: the server does not speak TLS on this port (for a plain or STARTTLS port such as 143 or 587, set secure: false).`,
    );
    expect(await count()).toBe(0);
  });

  it('validates the body and writes nothing on a bad one', async () => {
    const cases: Array<[object, string | RegExp]> = [
      [{ ...emailBody(), kind: 'fax' }, 'kind must be one of: email, calendar'],
      [{ ...emailBody(), imap: undefined }, /IMAP must be an object/],
      [
        { ...emailBody(), address: 'not-an-address' },
        'address must be an email address',
      ],
      [
        emailBody({ imap: server(ANN, 0) }),
        'IMAP port must be a whole number from 1 to 65535',
      ],
      [
        emailBody({
          imap: server(ANN, 993, { host: 'imaps://mail.example.com' }),
        }),
        /IMAP host must be a server name or IP address/,
      ],
      [
        emailBody({ imap: server(ANN, 993, { password: '' }) }),
        'IMAP password must not be empty',
      ],
      [
        { ...emailBody(), url: dav.url },
        'url is not a field of an email account',
      ],
      [
        { ...calendarBody(), imap: server(ANN, 1) },
        'imap is not a field of a calendar account',
      ],
      [{ ...emailBody(), name: '' }, 'name must not be empty'],
      [{ ...emailBody(), extra: 1 }, 'property extra should not exist'],
    ];
    for (const [body, message] of cases) {
      const res = await owner.post('/api/accounts').send(body);
      expect(res.status).toBe(400);
      const text = ([] as string[]).concat(res.body.message).join('\n');
      if (typeof message === 'string') expect(text).toContain(message);
      else expect(text).toMatch(message);
    }
    expect(await count()).toBe(0);
  });

  it('adds a calendar account after CalDAV discovery; plain http:// only with secure: false', async () => {
    const plain = await owner
      .post('/api/accounts')
      .send(calendarBody({ secure: undefined }))
      .expect(400);
    expect(plain.body.message).toMatch(
      /^url is plain http:\/\/.*set secure: false/,
    );
    const withCreds = await owner
      .post('/api/accounts')
      .send(
        calendarBody({ url: dav.url.replace('http://', 'http://carol:x@') }),
      )
      .expect(400);
    expect(withCreds.body.message).toMatch(
      /must not hold a user name or password/,
    );
    const wrong = await owner
      .post('/api/accounts')
      .send(calendarBody({ password: 'wrong-pw-xyz' }))
      .expect(400);
    expect(wrong.body.message).toMatch(/^CalDAV login failed for 'carol'/);
    noSecretIn(wrong.body);
    expect(await count()).toBe(0);

    const res = await owner
      .post('/api/accounts')
      .send(calendarBody())
      .expect(201);
    expect(res.body).toMatchObject({
      kind: 'calendar',
      name: 'Home calendar',
      url: dav.url,
      user: 'carol',
      address: 'carol',
      password: PASSWORD_MASK,
      secure: false,
    });
    noSecretIn(res.body);
  });

  it('tests a body without storing it, and a stored account on demand', async () => {
    const res = await owner
      .post('/api/accounts/test')
      .send(emailBody())
      .expect(200);
    expect(res.body).toEqual({
      ok: true,
      detail: expect.stringMatching(
        /^IMAP login succeeded \(\d+ folders?\) and SMTP login succeeded\.$/,
      ),
    });
    expect(await count()).toBe(0);
    const bad = await owner
      .post('/api/accounts/test')
      .send(calendarBody({ password: 'wrong-pw-xyz' }))
      .expect(400);
    expect(bad.body.message).toMatch(/CalDAV login failed/);

    const cal = await owner
      .post('/api/accounts')
      .send(calendarBody())
      .expect(201);
    const again = await owner
      .post(`/api/accounts/${cal.body.id}/test`)
      .expect(200);
    expect(again.body.detail).toMatch(/^CalDAV login succeeded/);
    await owner.post('/api/accounts/0123456789abcdef01234567/test').expect(404);
  });

  it('refuses a second account with the same name or address (409)', async () => {
    await owner.post('/api/accounts').send(emailBody()).expect(201);
    const sameAddress = await owner
      .post('/api/accounts')
      .send(emailBody({ name: 'Other', address: 'ANN@example.test' }))
      .expect(409);
    expect(sameAddress.body.message).toBe(
      'An email account for ANN@example.test exists already',
    );
    const sameName = await owner
      .post('/api/accounts')
      .send({ ...calendarBody(), name: 'personal' })
      .expect(409);
    expect(sameName.body.message).toMatch(
      /An account named 'personal' exists already/,
    );
    expect(await count()).toBe(1);
  });

  it('edits an account: the name alone, a masked password kept, a new password tested first', async () => {
    const { body: created } = await owner
      .post('/api/accounts')
      .send(emailBody())
      .expect(201);
    const renamed = await owner
      .patch(`/api/accounts/${created.id}`)
      .send({ name: 'Private', imap: { password: PASSWORD_MASK } })
      .expect(200);
    expect(renamed.body).toMatchObject({
      name: 'Private',
      imap: { password: PASSWORD_MASK },
    });
    expect((await stored.findById(created.id).lean())?.imap?.password).toBe(
      ANN.password,
    );

    const wrong = await owner
      .patch(`/api/accounts/${created.id}`)
      .send({ smtp: { password: 'wrong-pw-xyz' } })
      .expect(400);
    expect(wrong.body.message).toMatch(/^SMTP login failed/);
    noSecretIn(wrong.body);
    const doc = await stored.findById(created.id).lean();
    expect(doc?.smtp?.password).toBe(ANN.password);
    expect(doc?.name).toBe('Private');

    // Bob's login with Bob's password: tested, then stored.
    const moved = await owner
      .patch(`/api/accounts/${created.id}`)
      .send({
        address: 'bob@example.test',
        imap: { user: 'bob', password: BOB.password },
        smtp: { user: 'bob', password: BOB.password },
      })
      .expect(200);
    expect(moved.body).toMatchObject({
      address: 'bob@example.test',
      imap: { user: 'bob' },
    });
    expect(changes.map((c) => c.change)).toEqual([
      'created',
      'updated',
      'updated',
    ]);
  });

  it('keeps a stored password bound to its server: moving host, port or user needs it again', async () => {
    const { body: created } = await owner
      .post('/api/accounts')
      .send(emailBody())
      .expect(201);
    const before = await stored.findById(created.id).lean();
    for (const imap of [
      { host: 'localhost' },
      { port: mail.imapPort + 1 },
      { user: 'bob' },
    ]) {
      const res = await owner
        .patch(`/api/accounts/${created.id}`)
        .send({ imap })
        .expect(400);
      expect(res.body.message).toBe(
        'Changing the IMAP server, port or user needs the IMAP password again (the stored one stays with the server it was given for)',
      );
    }
    const cal = await owner
      .post('/api/accounts')
      .send(calendarBody())
      .expect(201);
    const res = await owner
      .patch(`/api/accounts/${cal.body.id}`)
      .send({ url: 'http://localhost:1/' })
      .expect(400);
    expect(res.body.message).toMatch(
      /^Changing the CalDAV URL or user needs the password again/,
    );
    expect(await stored.findById(created.id).lean()).toEqual(before);
  });

  it('refuses bad edits with 400 and leaves the account as it was', async () => {
    const { body: created } = await owner
      .post('/api/accounts')
      .send(emailBody())
      .expect(201);
    const before = await stored.findById(created.id).lean();
    for (const [body, message] of [
      [{ url: dav.url }, 'url is not a field of an email account'],
      [
        { imap: { port: 70000 } },
        'IMAP port must be a whole number from 1 to 65535',
      ],
      [{ name: null }, 'name must not be null'],
      [{ kind: 'calendar' }, 'property kind should not exist'],
    ] as const) {
      const res = await owner
        .patch(`/api/accounts/${created.id}`)
        .send(body)
        .expect(400);
      expect(([] as string[]).concat(res.body.message).join('\n')).toContain(
        message,
      );
    }
    expect(await stored.findById(created.id).lean()).toEqual(before);
    await owner.patch('/api/accounts/nope').send({ name: 'x' }).expect(404);
  });

  it('removes an account (204), then answers 404', async () => {
    const { body: created } = await owner
      .post('/api/accounts')
      .send(emailBody())
      .expect(201);
    await owner.delete(`/api/accounts/${created.id}`).expect(204);
    expect(await count()).toBe(0);
    await owner.delete(`/api/accounts/${created.id}`).expect(404);
    await owner.get(`/api/accounts/${created.id}`).expect(404);
    expect(changes.map((c) => c.change)).toEqual(['created', 'deleted']);
  });

  it('lists provider presets for the form', async () => {
    const res = await owner.get('/api/accounts/presets').expect(200);
    const gmail = res.body.find((p: { id: string }) => p.id === 'gmail');
    expect(gmail).toMatchObject({
      kind: 'email',
      imap: { host: 'imap.gmail.com', port: 993, secure: true },
      smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
    });
    expect(res.body.some((p: { kind: string }) => p.kind === 'calendar')).toBe(
      true,
    );
  });

  it('keeps accounts out of the AI database tool and the data browser', async () => {
    await owner.post('/api/accounts').send(emailBody()).expect(201);
    const collections = await owner.get('/api/data/collections').expect(200);
    expect(JSON.stringify(collections.body)).not.toContain('auth_accounts');
    await owner
      .get('/api/data/collections/auth_accounts/documents')
      .expect((r) => {
        expect([400, 403, 404]).toContain(r.status);
      });
  });
});
