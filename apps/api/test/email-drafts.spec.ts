import type {
  AppEventMap,
  CronJobView,
  CronRunView,
  EmailDraftView,
} from '@metatronos/shared-types';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  startGreenMail,
  type GreenMailServer,
} from '../../../tools/mail-servers/mail-servers';
import { AccountDoc } from '../src/accounts/schemas/account.schema';
import { EMAIL_DRAFTS_COLLECTION } from '../src/accounts/email/drafts/email-draft.schema';
import { DRAFT_SAVED_MESSAGE } from '../src/accounts/email/email-actions.tool';
import { AppEventBus } from '../src/events/app-event-bus';
import type { TurnSource } from '../src/llm/turn-source';
import { storeEmailAccount } from './support/accounts-kit';
import { settledRuns } from './support/automations-kit';
import { startFakeProviders, useModel } from './support/llm-test-kit';
import { deliver, mailIn, waitForMail } from './support/mail-kit';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type DraftEvent = AppEventMap['drafts.changed'];

const ANN_PASSWORD = 'ann-app-password-7Qz';
const BOB_PASSWORD = 'bob-app-password-4Kw';
const WRONG_PASSWORD = 'not-anns-password-555';
const MISSING_ID = '000000000000000000000000';

/** Next year, so session cookies made at the test clock's time stay valid. */
const NOW = new Date(`${new Date().getUTCFullYear() + 1}-04-01T09:00:00Z`);

describe('email drafts: unattended turns and /api/drafts', () => {
  let fake: Fake;
  let mail: GreenMailServer;
  let t: TestApp;
  let owner: TestAgent;
  let annId: string;
  const events: DraftEvent[] = [];

  const users = () => {
    const [ann, bob] = mail.users;
    return { ann, bob };
  };

  beforeAll(async () => {
    fake = await startFakeProviders();
    mail = await startGreenMail([
      { login: 'ann', password: ANN_PASSWORD },
      { login: 'bob', password: BOB_PASSWORD },
    ]);
    t = await createTestApp({ now: NOW });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    annId = await storeEmailAccount(t.app, mail, users().ann);
    t.app.get(AppEventBus).on('drafts.changed', (e) => events.push(e));
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t?.close();
    await mail?.stop();
    await fake?.close();
    fake?.restoreEnv();
  });

  async function tool(
    name: string,
    args: unknown,
    source: TurnSource,
    accountId?: string,
  ): Promise<Record<string, unknown>> {
    return callTool(t.app, name, args, {
      source,
      conversation: accountId
        ? {
            mode: 'email',
            accountId,
            setMode: async () => undefined,
            selectAccount: async () => undefined,
          }
        : undefined,
    });
  }

  const drafts = async (query = ''): Promise<EmailDraftView[]> =>
    (await owner.get(`/api/drafts${query}`).expect(200)).body;
  const draftById = async (id: string) =>
    (await drafts()).find((d) => d.id === id);
  const subjectsIn = async (folder = 'INBOX') =>
    (await mailIn(mail, users().bob, folder)).map((m) => m.parsed.subject);

  let cronDraft: EmailDraftView;

  it("turns a scheduled job's send into a pending draft and delivers nothing", async () => {
    const job: CronJobView = (
      await owner
        .post('/api/cronjobs')
        .send({
          name: 'Weekly digest',
          instruction: 'Mail Bob the weekly digest.',
          cronExpression: '0 8 * * 1',
          mode: 'email',
        })
        .expect(201)
    ).body;
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'email_actions',
            arguments: {
              action: 'send',
              to: ['bob@example.test'],
              subject: 'Weekly digest',
              text: 'Three things happened this week.',
            },
          },
        ],
      },
      { text: ['Drafted the digest.'] },
    );
    await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
    const [run] = await settledRuns(
      async (): Promise<CronRunView[]> =>
        (await owner.get(`/api/cronjobs/${job.id}/runs`).expect(200)).body,
    );
    expect(run.outcome).toBe('success');

    const toolAnswer = JSON.stringify(fake.openai.requests[1].body.messages);
    expect(toolAnswer).toContain(DRAFT_SAVED_MESSAGE);
    const list = await drafts();
    expect(list).toHaveLength(1);
    cronDraft = list[0];
    expect(cronDraft).toEqual({
      id: expect.any(String),
      accountId: annId,
      accountAddress: 'ann@example.test',
      action: 'send',
      to: ['bob@example.test'],
      cc: [],
      subject: 'Weekly digest',
      text: 'Three things happened this week.',
      inReplyTo: null,
      source: 'cron',
      chatId: job.chatId,
      jobId: job.id,
      jobName: 'Weekly digest',
      repliesTo: null,
      status: 'pending',
      error: null,
      createdAt: NOW.toISOString(),
      sentAt: null,
    });
    expect(toolAnswer).toContain(cronDraft.id);
    expect(events).toEqual([
      { id: cronDraft.id, change: 'created', at: NOW.toISOString() },
    ]);
    expect(await subjectsIn()).toEqual([]);
  });

  it('turns a Pulse or auto-reply reply into a draft that keeps the thread', async () => {
    const { ann, bob } = users();
    await deliver(mail, bob, {
      to: ann.address,
      subject: 'Question',
      text: 'Are you coming on Friday?',
      messageId: '<question-1@example.test>',
    });
    const uid = (await waitForMail(mail, ann, (m) => m.subject === 'Question'))
      .uid;
    t.clock.advance(60_000);
    const answer = await tool(
      'email_actions',
      { action: 'reply', uid, text: 'Yes, see you there.' },
      'auto-reply',
    );
    expect(answer).toEqual({
      draft: true,
      draftId: expect.any(String),
      message: DRAFT_SAVED_MESSAGE,
    });
    const pulse = await tool(
      'email_actions',
      {
        action: 'send',
        to: ['bob@example.test'],
        subject: 'Pulse',
        text: 'x',
      },
      'pulse',
    );
    expect(pulse).toMatchObject({ draft: true });
    const reply = await draftById(answer['draftId'] as string);
    expect(reply).toMatchObject({
      action: 'reply',
      to: ['bob@example.test'],
      subject: 'Re: Question',
      inReplyTo: '<question-1@example.test>',
      source: 'auto-reply',
      jobId: null,
      jobName: null,
      repliesTo: { subject: 'Question', from: 'bob@example.test' },
      status: 'pending',
    });
    expect(await draftById(pulse['draftId'] as string)).toMatchObject({
      source: 'pulse',
      jobId: null,
      jobName: null,
      repliesTo: null,
    });
    expect(await subjectsIn()).toEqual([]);
  });

  it('lists newest first and filters by status', async () => {
    const all = await drafts();
    expect(all.map((d) => d.subject)).toEqual([
      'Pulse',
      'Re: Question',
      'Weekly digest',
    ]);
    expect((await drafts('?status=pending')).length).toBe(3);
    expect(await drafts('?status=sent')).toEqual([]);
    const bad = await owner.get('/api/drafts?status=bogus').expect(400);
    expect(JSON.stringify(bad.body.message)).toContain(
      'status must be one of the following values: pending, sent, failed',
    );
  });

  describe('PATCH /api/drafts/:id', () => {
    it.each([
      [{ to: ['not-an-address'] }, 'to must hold email addresses only'],
      [{ cc: ['bob@example.test', 'x'] }, 'cc must hold email addresses only'],
      [{ to: [] }, 'to must contain at least 1 elements'],
      [{ to: 'bob@example.test' }, 'to must be an array'],
      [{ subject: 5 }, 'subject must be a string'],
      [{ text: null }, 'text must not be null'],
      [{ status: 'sent' }, 'property status should not exist'],
    ])('refuses %j with 400 and changes nothing', async (body, message) => {
      const before = await draftById(cronDraft.id);
      const res = await owner
        .patch(`/api/drafts/${cronDraft.id}`)
        .send(body)
        .expect(400);
      expect(JSON.stringify(res.body.message)).toContain(message);
      expect(await draftById(cronDraft.id)).toEqual(before);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      await owner
        .patch(`/api/drafts/${MISSING_ID}`)
        .send({ subject: 'x' })
        .expect(404, /Draft not found/);
      await owner
        .patch('/api/drafts/not-an-id')
        .send({ subject: 'x' })
        .expect(404);
    });

    it('edits recipients, subject and text', async () => {
      events.length = 0;
      const res = await owner
        .patch(`/api/drafts/${cronDraft.id}`)
        .send({
          cc: ['ann@example.test'],
          subject: 'Weekly digest (edited)',
        })
        .expect(200);
      expect(res.body).toMatchObject({
        id: cronDraft.id,
        to: ['bob@example.test'],
        cc: ['ann@example.test'],
        subject: 'Weekly digest (edited)',
        text: 'Three things happened this week.',
        status: 'pending',
      });
      expect(await draftById(cronDraft.id)).toEqual(res.body);
      // Other consoles showing the draft hear of the edit.
      expect(events).toEqual([
        {
          id: cronDraft.id,
          change: 'updated',
          at: t.clock.now().toISOString(),
        },
      ]);
    });
  });

  describe('POST /api/drafts/:id/send', () => {
    it('sends a draft as edited, marks it sent and refuses a second send', async () => {
      events.length = 0;
      t.clock.advance(5 * 60_000);
      const res = await owner
        .post(`/api/drafts/${cronDraft.id}/send`)
        .expect(200);
      expect(res.body).toMatchObject({
        id: cronDraft.id,
        status: 'sent',
        sentAt: t.clock.now().toISOString(),
        error: null,
      });
      const arrived = await waitForMail(
        mail,
        users().bob,
        (m) => m.subject === 'Weekly digest (edited)',
      );
      expect(arrived.parsed.from?.value[0].address).toBe('ann@example.test');
      expect(arrived.parsed.text?.trim()).toBe(
        'Three things happened this week.',
      );
      expect(events).toEqual([
        { id: cronDraft.id, change: 'sent', at: t.clock.now().toISOString() },
      ]);

      await owner
        .post(`/api/drafts/${cronDraft.id}/send`)
        .expect(409, /This draft was already sent/);
      await owner
        .patch(`/api/drafts/${cronDraft.id}`)
        .send({ subject: 'again' })
        .expect(409);
      expect(await drafts('?status=sent')).toHaveLength(1);
      expect(
        (await subjectsIn()).filter((s) => s === 'Weekly digest (edited)'),
      ).toHaveLength(1);
    });

    it('sends a reply draft with In-Reply-To and References', async () => {
      const reply = (await drafts('?status=pending')).find(
        (d) => d.action === 'reply',
      ) as EmailDraftView;
      await owner.post(`/api/drafts/${reply.id}/send`).expect(200);
      const arrived = await waitForMail(
        mail,
        users().bob,
        (m) => m.subject === 'Re: Question',
      );
      expect(arrived.parsed.inReplyTo).toBe('<question-1@example.test>');
      expect(arrived.parsed.references).toBe('<question-1@example.test>');
    });

    it('marks the draft failed with a 502 when the server refuses the login, never showing the password', async () => {
      const brokenId = await storeEmailAccount(
        t.app,
        mail,
        { ...users().ann, password: WRONG_PASSWORD },
        'ann (old password)',
      );
      const made = await tool(
        'email_actions',
        {
          action: 'send',
          to: ['bob@example.test'],
          subject: 'Broken',
          text: 'x',
        },
        'cron',
        brokenId,
      );
      events.length = 0;
      const res = await owner
        .post(`/api/drafts/${made['draftId']}/send`)
        .expect(502);
      expect(res.body.message).toMatch(
        /^SMTP login failed for 'ann' at 127\.0\.0\.1:\d+: wrong user name or password/,
      );
      const failed = await draftById(made['draftId'] as string);
      expect(failed).toMatchObject({ status: 'failed', sentAt: null });
      expect(failed?.error).toBe(res.body.message);
      expect(JSON.stringify(res.body) + JSON.stringify(failed)).not.toContain(
        WRONG_PASSWORD,
      );
      expect(events.map((e) => e.change)).toEqual(['failed']);
      // A failed draft can still be edited (and sent once the account is fixed).
      await owner
        .patch(`/api/drafts/${made['draftId']}`)
        .send({ subject: 'Broken (edited)' })
        .expect(200);
      expect(await subjectsIn()).not.toContain('Broken');
    });

    it('answers 400 when the draft’s account was removed', async () => {
      const temporaryId = await storeEmailAccount(
        t.app,
        mail,
        users().bob,
        'bob temporary',
      );
      const made = await tool(
        'email_actions',
        {
          action: 'send',
          to: ['ann@example.test'],
          subject: 'Orphan',
          text: 'x',
        },
        'pulse',
        temporaryId,
      );
      await t.app
        .get<Model<AccountDoc>>(getModelToken(AccountDoc.name))
        .deleteOne({ _id: temporaryId });
      const res = await owner
        .post(`/api/drafts/${made['draftId']}/send`)
        .expect(400);
      expect(res.body.message).toBe(
        'The email account bob@example.test this draft was written for no longer exists: add it again, or discard the draft.',
      );
      expect(await draftById(made['draftId'] as string)).toMatchObject({
        status: 'failed',
        error: res.body.message,
      });
      expect(
        (await mailIn(mail, users().ann)).map((m) => m.parsed.subject),
      ).not.toContain('Orphan');
    });

    it('sends once when two sends of the same draft race', async () => {
      const made = await tool(
        'email_actions',
        {
          action: 'send',
          to: ['bob@example.test'],
          subject: 'Exactly once',
          text: 'x',
        },
        'cron',
        annId,
      );
      expect(made).toMatchObject({ draft: true });
      const url = `/api/drafts/${made['draftId']}/send`;
      const statuses = (
        await Promise.all([owner.post(url), owner.post(url)])
      ).map((r) => r.status);
      expect(statuses.sort()).toEqual([200, 409]);
      await waitForMail(mail, users().bob, (m) => m.subject === 'Exactly once');
      expect(
        (await subjectsIn()).filter((s) => s === 'Exactly once'),
      ).toHaveLength(1);
    });

    it('answers 404 for an unknown draft', async () => {
      await owner.post(`/api/drafts/${MISSING_ID}/send`).expect(404);
    });
  });

  describe('DELETE /api/drafts/:id', () => {
    it('discards a draft (204), then answers 404', async () => {
      const pulse = (await drafts()).find(
        (d) => d.subject === 'Pulse',
      ) as EmailDraftView;
      events.length = 0;
      await owner.delete(`/api/drafts/${pulse.id}`).expect(204);
      expect(await draftById(pulse.id)).toBeUndefined();
      expect(events).toEqual([
        { id: pulse.id, change: 'discarded', at: t.clock.now().toISOString() },
      ]);
      await owner.delete(`/api/drafts/${pulse.id}`).expect(404);
      await owner.delete('/api/drafts/not-an-id').expect(404);
      expect(await subjectsIn()).not.toContain('Pulse');
    });
  });

  it('keeps email_drafts read-only to db_query: the AI cannot approve or forge a draft', async () => {
    const before = await drafts();
    const pending = before.find((d) => d.status !== 'sent') as EmailDraftView;
    const insert = await tool(
      'db_query',
      {
        operation: 'insertOne',
        collection: EMAIL_DRAFTS_COLLECTION,
        data: { to: ['x@example.test'], status: 'pending' },
      },
      'chat',
    );
    expect(String(insert['error'])).toContain(
      'Write operations are restricted to AI-managed collections',
    );
    const update = await tool(
      'db_query',
      {
        operation: 'updateMany',
        collection: EMAIL_DRAFTS_COLLECTION,
        filter: {},
        update: { $set: { to: ['x@example.test'] } },
      },
      'cron',
    );
    expect(String(update['error'])).toContain(
      'Write operations are restricted to AI-managed collections',
    );
    expect(await drafts()).toEqual(before);
    expect(pending.to).not.toEqual(['x@example.test']);
  });

  it('requires the owner session', async () => {
    await t.http().get('/api/drafts').expect(401);
    await t.http().post(`/api/drafts/${MISSING_ID}/send`).expect(401);
  });
});
