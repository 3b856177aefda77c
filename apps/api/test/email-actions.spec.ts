import { ToolTurn } from '../src/actions/tool-turn';
import type { ChatSummary, ToolsResponse } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import {
  startGreenMail,
  type GreenMailServer,
} from '../../../tools/mail-servers/mail-servers';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import type { AiToolContext } from '../src/ai-tools/ai-tool';
import { EMAIL_CONTENT_NOTE } from '../src/accounts/email/email-actions.tool';
import { ImapPool } from '../src/accounts/email/imap-pool';
import { MAX_SOURCE_BYTES } from '../src/accounts/email/mailbox';
import { AppEventBus } from '../src/events/app-event-bus';
import type { TurnSource } from '../src/llm/turn-source';
import { SettingsService } from '../src/settings/settings.service';
import { storeEmailAccount } from './support/accounts-kit';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { deliver, mailIn, waitForMail, withImap } from './support/mail-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type Result = Record<string, unknown> & { error?: string };
interface Summary {
  uid: number;
  subject: string;
  from: string;
  to: string[];
  messageId: string | null;
  date: string | null;
  flags: string[];
}

const ANN_PASSWORD = 'ann-app-password-7Qz';
const BOB_PASSWORD = 'bob-app-password-4Kw';
const CAT_PASSWORD = 'cat-app-password-9Vt';
const WRONG_PASSWORD = 'not-bobs-password-123';

describe('email_actions against GreenMail', () => {
  let fake: Fake;
  let mail: GreenMailServer;
  let t: TestApp;
  let owner: TestAgent;
  let annId: string;
  let unavailableBefore: Result;
  let toolsBefore: ToolsResponse;

  const users = () => {
    const [ann, bob, cat] = mail.users;
    return { ann, bob, cat };
  };

  beforeAll(async () => {
    fake = await startFakeProviders();
    mail = await startGreenMail([
      { login: 'ann', password: ANN_PASSWORD },
      { login: 'bob', password: BOB_PASSWORD },
      { login: 'cat', password: CAT_PASSWORD },
    ]);
    t = await createTestApp();
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    const { ann, bob, cat } = users();
    // Before any account exists, the tool is not offered (checked in the first test).
    unavailableBefore = await call({ action: 'search' });
    toolsBefore = (await owner.get('/api/tools').expect(200)).body;
    annId = await storeEmailAccount(t.app, mail, ann);

    await deliver(mail, bob, {
      to: ann.address,
      subject: 'Quarterly report',
      text: 'The numbers for Q4 are in.',
      date: new Date('2026-01-10T09:00:00Z'),
    });
    await deliver(mail, cat, {
      to: ann.address,
      subject: 'Lunch plans',
      text: 'Pizza on Friday?',
      date: new Date('2026-03-05T12:00:00Z'),
    });
    await deliver(mail, bob, {
      to: ann.address,
      subject: 'Newsletter',
      text: 'Plain version: spring sale',
      html: '<p>HTML version: <b>spring sale</b></p>',
      date: new Date('2026-03-06T08:00:00Z'),
    });
    await deliver(mail, cat, {
      to: ann.address,
      subject: 'Invoice 42',
      html: '<h1>Invoice 42</h1><p>Total: <b>99 EUR</b></p><script>alert(1)</script>',
      date: new Date('2026-03-07T08:00:00Z'),
    });
    await waitForMail(mail, ann, (m) => m.subject === 'Invoice 42');
    await withImap(mail, ann, async (client) => {
      await client.mailboxCreate('Archive');
      await client.append(
        'Archive',
        [
          `From: ${bob.address}`,
          `To: ${ann.address}`,
          'Subject: Old contract',
          'Message-ID: <old-contract@example.test>',
          'Date: Mon, 02 Jun 2025 10:00:00 +0000',
          '',
          `Clause: ${'x'.repeat(25_000)}`,
          '',
        ].join('\r\n'),
      );
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t?.close();
    await mail?.stop();
    await fake?.close();
    fake?.restoreEnv();
  });

  /** The turn of the latest `call`: what its result marked. */
  let lastTurn: ToolTurn;

  async function call(
    args: unknown,
    options: {
      source?: TurnSource;
      accountId?: string;
      signal?: AbortSignal;
    } = {},
  ): Promise<Result> {
    lastTurn = new ToolTurn({ source: options.source ?? 'chat', runId: null });
    const context: AiToolContext = {
      source: options.source ?? 'chat',
      settings: await t.app.get(SettingsService).get(),
      chatId: null,
      messageId: null,
      turn: lastTurn,
      signal: options.signal ?? new AbortController().signal,
      conversation: options.accountId
        ? {
            mode: 'email',
            accountId: options.accountId,
            setMode: async () => undefined,
            selectAccount: async () => undefined,
          }
        : undefined,
    };
    return JSON.parse(
      await t.app.get(AiToolRegistry).execute('email_actions', args, context),
    );
  }

  const subjects = (result: Result) =>
    (result['messages'] as Summary[]).map((m) => m.subject);
  const uidOf = async (subject: string, folder = 'INBOX') => {
    const found = (await mailIn(mail, users().ann, folder)).find(
      (m) => m.parsed.subject === subject,
    );
    if (!found) throw new Error(`no '${subject}' in ${folder}`);
    return found.uid;
  };

  it('is offered in the email mode once an email account exists', async () => {
    expect(unavailableBefore).toEqual({
      error: "Unknown or unavailable tool 'email_actions'",
    });
    const emailMode = (tools: ToolsResponse) =>
      tools.modes.find((m) => m.name === 'email');
    expect(emailMode(toolsBefore)).toMatchObject({
      accountKind: 'email',
      tools: [
        {
          name: 'email_actions',
          available: false,
          reason: 'No email account is connected yet.',
        },
      ],
    });
    const now = (await owner.get('/api/tools').expect(200)).body;
    expect(emailMode(now)?.tools).toMatchObject([
      { name: 'email_actions', available: true, reason: null },
    ]);
  });

  describe('search', () => {
    it('lists header summaries newest first, with the third-party note', async () => {
      const result = await call({ action: 'search' });
      // Senders and subjects are other people's words: the turn is marked.
      expect(lastTurn.taint).toEqual([
        expect.objectContaining({
          by: 'email_actions',
          text: 'email search results (senders and subjects)',
        }),
      ]);
      expect(result).toMatchObject({
        account: 'ann@example.test',
        folder: 'INBOX',
        total: 4,
        count: 4,
        note: EMAIL_CONTENT_NOTE,
      });
      expect(subjects(result)).toEqual([
        'Invoice 42',
        'Newsletter',
        'Lunch plans',
        'Quarterly report',
      ]);
      const [invoice] = result['messages'] as Summary[];
      expect(invoice).toEqual({
        uid: await uidOf('Invoice 42'),
        messageId: expect.stringMatching(/^<.+@.+>$/),
        from: 'cat@example.test',
        to: ['ann@example.test'],
        subject: 'Invoice 42',
        date: '2026-03-07T08:00:00.000Z',
        flags: [],
      });
      // Headers only: no body text travels with a search.
      expect(JSON.stringify(result)).not.toContain('99 EUR');
    });

    it.each([
      [{ query: 'numbers' }, ['Quarterly report']],
      [{ query: 'pizza' }, ['Lunch plans']],
      [{ from: 'cat@' }, ['Invoice 42', 'Lunch plans']],
      [{ since: '2026-03-01' }, ['Invoice 42', 'Newsletter', 'Lunch plans']],
      [{ before: '2026-03-01' }, ['Quarterly report']],
      [{ since: '2026-03-06', before: '2026-03-07' }, ['Newsletter']],
      [{ from: 'bob', since: '2026-03-01' }, ['Newsletter']],
      [{ folder: 'Archive' }, ['Old contract']],
    ])('search %j finds %j', async (criteria, expected) => {
      expect(subjects(await call({ action: 'search', ...criteria }))).toEqual(
        expected,
      );
    });

    it('limits the list and still counts every match', async () => {
      const result = await call({ action: 'search', limit: 2 });
      expect(result).toMatchObject({ total: 4, count: 2 });
      expect(subjects(result)).toEqual(['Invoice 42', 'Newsletter']);
    });

    it('names the folders when the folder does not exist', async () => {
      const result = await call({ action: 'search', folder: 'Nope' });
      expect(result.error).toMatch(
        /^No folder 'Nope' in this mailbox\. Folders: .*INBOX/,
      );
      expect(result.error).toContain('Archive');
    });
  });

  describe('read', () => {
    it('reads a multipart message as its plain-text part, without marking it seen', async () => {
      const uid = await uidOf('Newsletter');
      const result = await call({ action: 'read', uid });
      expect(result).toMatchObject({
        uid,
        folder: 'INBOX',
        subject: 'Newsletter',
        from: 'bob@example.test',
        to: ['ann@example.test'],
        text: 'Plain version: spring sale',
        truncated: false,
        note: EMAIL_CONTENT_NOTE,
      });
      const stored = (await mailIn(mail, users().ann)).find(
        (m) => m.uid === uid,
      );
      expect(stored?.flags).not.toContain('\\Seen');
    });

    it('converts an HTML-only message to text', async () => {
      const result = await call({
        action: 'read',
        uid: await uidOf('Invoice 42'),
      });
      const text = String(result['text']);
      expect(text).toMatch(/invoice 42/i);
      expect(text).toContain('Total: 99 EUR');
      expect(text).not.toMatch(/<|alert/);
    });

    it('caps a long body and says so', async () => {
      const result = await call({
        action: 'read',
        folder: 'Archive',
        uid: await uidOf('Old contract', 'Archive'),
      });
      expect(String(result['text'])).toHaveLength(20_000);
      expect(result['truncated']).toBe(true);
      expect(result['messageId']).toBe('<old-contract@example.test>');
    });

    it('reads the text of a message too big to fetch whole, and says it was cut', async () => {
      const { ann, bob } = users();
      const scan = Buffer.alloc(MAX_SOURCE_BYTES + 1024 * 1024, 7)
        .toString('base64')
        .replace(/.{76}/g, '$&\r\n');
      await withImap(mail, ann, (client) =>
        client.append(
          'Archive',
          [
            `From: ${bob.address}`,
            `To: ${ann.address}`,
            'Subject: Big scan',
            'MIME-Version: 1.0',
            'Content-Type: multipart/mixed; boundary="b1"',
            '',
            '--b1',
            'Content-Type: text/plain; charset=utf-8',
            '',
            'Please see the attached scan.',
            '--b1',
            'Content-Type: application/pdf; name="scan.pdf"',
            'Content-Transfer-Encoding: base64',
            'Content-Disposition: attachment; filename="scan.pdf"',
            '',
            scan,
            '--b1--',
            '',
          ].join('\r\n'),
        ),
      );
      const result = await call({
        action: 'read',
        folder: 'Archive',
        uid: await uidOf('Big scan', 'Archive'),
      });
      expect(result).toMatchObject({
        subject: 'Big scan',
        text: 'Please see the attached scan.',
        truncated: true,
      });
    });

    it('says when the uid is not in the folder', async () => {
      expect(await call({ action: 'read', uid: 9999 })).toEqual({
        error: "No message with uid 9999 in folder 'INBOX'",
      });
    });
  });

  describe('send and reply', () => {
    it('sends a message that arrives in the recipients’ mailboxes', async () => {
      const { bob, cat } = users();
      const result = await call({
        action: 'send',
        to: [bob.address],
        cc: [cat.address],
        subject: 'Hello Bob',
        text: 'Meeting at 10?',
      });
      expect(result).toMatchObject({
        sent: true,
        from: 'ann@example.test',
        to: ['bob@example.test'],
        cc: ['cat@example.test'],
        subject: 'Hello Bob',
        messageId: expect.stringMatching(/^<.+>$/),
      });
      const arrived = await waitForMail(
        mail,
        bob,
        (m) => m.subject === 'Hello Bob',
      );
      expect(arrived.parsed.from?.value[0].address).toBe('ann@example.test');
      expect(arrived.parsed.text?.trim()).toBe('Meeting at 10?');
      expect(arrived.parsed.messageId).toBe(result['messageId']);
      await waitForMail(mail, cat, (m) => m.subject === 'Hello Bob');
    });

    it('takes one address as a string where a list is asked for, and a uid in quotes', async () => {
      const { bob, cat } = users();
      const result = await call({
        action: 'send',
        to: bob.address,
        cc: cat.address,
        subject: 'One string',
        text: 'Lenient.',
      });
      expect(result).toMatchObject({
        sent: true,
        to: ['bob@example.test'],
        cc: ['cat@example.test'],
      });
      await waitForMail(mail, bob, (m) => m.subject === 'One string');
      expect(await call({ action: 'read', uid: '9999' })).toEqual({
        error: "No message with uid 9999 in folder 'INBOX'",
      });
      expect(
        await call({ action: 'send', to: 5, subject: 'x', text: 'y' }),
      ).toEqual({
        error: "Argument 'to[0]' must be a string (got number)",
      });
    });

    it('replies to all with In-Reply-To, References and one "Re:"', async () => {
      const { ann, bob, cat } = users();
      await deliver(mail, bob, {
        to: ann.address,
        cc: cat.address,
        subject: 'Budget 2027',
        text: 'Can we agree on the budget?',
        messageId: '<budget-2@example.test>',
        references: ['<budget-1@example.test>'],
      });
      await waitForMail(mail, ann, (m) => m.subject === 'Budget 2027');
      const result = await call({
        action: 'reply',
        uid: await uidOf('Budget 2027'),
        text: 'Agreed.',
        reply_all: true,
      });
      expect(result).toMatchObject({
        sent: true,
        to: ['bob@example.test'],
        cc: ['cat@example.test'],
        subject: 'Re: Budget 2027',
        inReplyTo: '<budget-2@example.test>',
      });
      const reply = await waitForMail(
        mail,
        bob,
        (m) => m.subject === 'Re: Budget 2027',
      );
      expect(reply.parsed.inReplyTo).toBe('<budget-2@example.test>');
      expect(reply.parsed.references).toEqual([
        '<budget-1@example.test>',
        '<budget-2@example.test>',
      ]);
      expect(reply.parsed.text?.trim()).toBe('Agreed.');
      expect(reply.parsed.cc).toMatchObject({
        value: [{ address: 'cat@example.test' }],
      });
      await waitForMail(mail, cat, (m) => m.subject === 'Re: Budget 2027');
    });

    it('replies to Reply-To (not From), only to the sender, keeping an existing "Re:"', async () => {
      const { ann, bob, cat } = users();
      await deliver(mail, cat, {
        to: ann.address,
        cc: bob.address,
        replyTo: bob.address,
        subject: 'Re: Offsite',
        text: 'Where shall we go?',
        messageId: '<offsite-1@example.test>',
      });
      await waitForMail(mail, ann, (m) => m.subject === 'Re: Offsite');
      const result = await call({
        action: 'reply',
        uid: await uidOf('Re: Offsite'),
        text: 'The lake.',
      });
      expect(result).toMatchObject({
        sent: true,
        to: ['bob@example.test'],
        cc: [],
        subject: 'Re: Offsite',
      });
      const reply = await waitForMail(
        mail,
        bob,
        (m) => m.inReplyTo === '<offsite-1@example.test>',
      );
      expect(reply.parsed.subject).toBe('Re: Offsite');
      expect(reply.parsed.references).toBe('<offsite-1@example.test>');
    });
  });

  describe('move and mark', () => {
    it('moves a message to another folder', async () => {
      const uid = await uidOf('Quarterly report');
      const result = await call({
        action: 'move',
        uid,
        target_folder: 'Archive',
      });
      expect(result).toMatchObject({
        moved: [uid],
        folder: 'INBOX',
        target_folder: 'Archive',
      });
      const inbox = await mailIn(mail, users().ann);
      expect(inbox.map((m) => m.parsed.subject)).not.toContain(
        'Quarterly report',
      );
      const archive = await mailIn(mail, users().ann, 'Archive');
      expect(archive.map((m) => m.parsed.subject)).toContain(
        'Quarterly report',
      );
    });

    it('refuses an unknown target folder or uid and moves nothing', async () => {
      const before = (await mailIn(mail, users().ann)).map((m) => m.uid);
      const lunch = await uidOf('Lunch plans');
      const noFolder = await call({
        action: 'move',
        uid: lunch,
        target_folder: 'Nowhere',
      });
      expect(noFolder.error).toMatch(
        /^No folder 'Nowhere' in this mailbox\. Folders: /,
      );
      expect(
        await call({
          action: 'move',
          uids: [lunch, 9999],
          target_folder: 'Archive',
        }),
      ).toEqual({ error: "No message with uid 9999 in folder 'INBOX'" });
      expect((await mailIn(mail, users().ann)).map((m) => m.uid)).toEqual(
        before,
      );
    });

    it('marks seen and flagged, and back to unread', async () => {
      const uid = await uidOf('Lunch plans');
      const marked = await call({
        action: 'mark',
        uids: [uid],
        seen: true,
        flagged: true,
      });
      expect(marked).toMatchObject({ marked: [uid] });
      const flagsOf = async () =>
        (await mailIn(mail, users().ann)).find((m) => m.uid === uid)?.flags;
      expect(await flagsOf()).toEqual(
        expect.arrayContaining(['\\Seen', '\\Flagged']),
      );
      const unseen = await call({ action: 'search', unseen_only: true });
      expect(subjects(unseen)).not.toContain('Lunch plans');
      expect(subjects(unseen)).toContain('Invoice 42');

      await call({ action: 'mark', uid, seen: false });
      const after = await flagsOf();
      expect(after).toContain('\\Flagged');
      expect(after).not.toContain('\\Seen');
    });
  });

  it('stops when the turn is stopped, sending nothing', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const before = (await mailIn(mail, users().bob)).length;
    for (const args of [
      { action: 'search' },
      {
        action: 'send',
        to: ['bob@example.test'],
        subject: 'Never',
        text: 'x',
      },
    ])
      expect(await call(args, { signal: stopped.signal })).toEqual({
        error: 'The request was stopped.',
      });
    expect((await mailIn(mail, users().bob)).length).toBe(before);
  });

  describe('bad arguments', () => {
    it.each([
      [
        {},
        "Argument 'action' must be one of: search, read, send, reply, move, mark",
      ],
      [
        { action: 'delete' },
        "Argument 'action' must be one of: search, read, send, reply, move, mark",
      ],
      [
        { action: 'read' },
        "'uid' is required for read (the message's uid from search)",
      ],
      [
        { action: 'send', subject: 'x', text: 'y' },
        "'to' is required for send (one or more email addresses)",
      ],
      [
        { action: 'send', to: [], subject: 'x', text: 'y' },
        "'to' is required for send (one or more email addresses)",
      ],
      [
        { action: 'send', to: ['not-an-address'], subject: 'x', text: 'y' },
        "'not-an-address' is not an email address",
      ],
      [
        {
          action: 'send',
          to: ['bob@example.test'],
          cc: ['bob'],
          subject: 'x',
          text: 'y',
        },
        "'bob' is not an email address",
      ],
      [
        { action: 'send', to: ['bob@example.test'], text: 'y' },
        "'subject' is required for send",
      ],
      [
        { action: 'send', to: ['bob@example.test'], subject: 'x', text: '  ' },
        "'text' is required for send",
      ],
      [{ action: 'reply', uid: 1 }, "'text' is required for reply"],
      [
        { action: 'reply', text: 'hi' },
        "'uid' is required for reply (the message's uid from search)",
      ],
      [
        { action: 'move', target_folder: 'Archive' },
        "'uid' or 'uids' is required for move (from search)",
      ],
      [{ action: 'move', uid: 1 }, "'target_folder' is required for move"],
      [
        { action: 'mark', uid: 1 },
        "'seen' or 'flagged' is required for mark (true or false)",
      ],
      [
        { action: 'search', since: 'March 1' },
        "'since' must be a date like 2026-03-01 (got 'March 1')",
      ],
      [
        { action: 'search', before: '2026-02-30' },
        "'before' must be a date like 2026-03-01 (got '2026-02-30')",
      ],
    ])('%j → %j, and no mail moves', async (args, error) => {
      const { ann, bob } = users();
      const before = [
        (await mailIn(mail, ann)).length,
        (await mailIn(mail, bob)).length,
      ];
      expect(await call(args)).toEqual({ error });
      expect([
        (await mailIn(mail, ann)).length,
        (await mailIn(mail, bob)).length,
      ]).toEqual(before);
    });

    it('refuses a search limit over 50', async () => {
      const result = await call({ action: 'search', limit: 51 });
      expect(result.error).toMatch(/^Argument 'limit' /);
      expect(result.error).toContain('50');
    });
  });

  it('works in email mode through a real chat turn on the fake provider, without the password in any request', async () => {
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'email' })
      .expect(200);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'email_actions',
            arguments: { action: 'search', query: 'pizza' },
          },
        ],
      },
      { text: ['Cat asks about pizza on Friday.'] },
    );
    const events = await (await chatClient(t)).send(chat.id, 'Any lunch mail?');
    const [result] = eventsNamed(events, 'tool_result') as Array<{
      result: string;
    }>;
    expect(JSON.parse(result.result)).toMatchObject({
      account: 'ann@example.test',
      total: 1,
      messages: [{ subject: 'Lunch plans', from: 'cat@example.test' }],
    });
    const [first, second] = fake.openai.requests;
    const offered = (first.body.tools as { function: { name: string } }[]).map(
      (tool) => tool.function.name,
    );
    expect(offered).toEqual(
      expect.arrayContaining(['email_actions', 'select_account']),
    );
    expect(JSON.stringify(second.body.messages)).toContain('Lunch plans');
    const everything = JSON.stringify(fake.openai.requests);
    for (const password of [ANN_PASSWORD, BOB_PASSWORD, CAT_PASSWORD])
      expect(everything).not.toContain(password);
  });

  describe('connections (ImapPool)', () => {
    const pool = () => t.app.get(ImapPool);
    const search = { action: 'search', folder: 'INBOX' };

    it('keeps the account logged in between calls, two connections at most, each call on its own', async () => {
      const alone = await call(search);
      const archive = await call({ action: 'search', folder: 'Archive' });
      expect(alone['messages']).toBeDefined();
      expect(archive['messages']).toBeDefined();
      expect(pool().openConnections(annId)).toBeGreaterThanOrEqual(1);
      const uid = await uidOf('Lunch plans');
      // Searches and reads of two folders at once: each answers what it would alone.
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 4 === 3
            ? call({ action: 'search', folder: 'Archive' })
            : i % 2
              ? call({ action: 'read', folder: 'INBOX', uid })
              : call(search),
        ),
      );
      expect(pool().openConnections(annId)).toBeLessThanOrEqual(2);
      results.forEach((result, i) => {
        if (i % 4 === 3) expect(result).toEqual(archive);
        else if (i % 2)
          expect(result).toMatchObject({ subject: 'Lunch plans' });
        else expect(result).toEqual(alone);
      });
    });

    it('replaces a connection whose socket died', async () => {
      await call(search);
      const lent = pool() as unknown as {
        pools: Map<
          string,
          { idle: Array<{ client: { socket?: { destroy(): void } } }> }
        >;
      };
      for (const { client } of lent.pools.get(annId)?.idle ?? [])
        client.socket?.destroy();
      const after = await call(search);
      expect(after).not.toHaveProperty('error');
      expect(subjects(after)).toContain('Lunch plans');
      expect(pool().openConnections(annId)).toBeLessThanOrEqual(2);
    });

    it('closes the account’s connections when it is edited or deleted', async () => {
      await call(search);
      expect(pool().openConnections(annId)).toBeGreaterThan(0);
      await t.app.get(AppEventBus).emitAndWait('accounts.changed', {
        id: annId,
        change: 'updated',
        at: new Date().toISOString(),
      });
      expect(pool().openConnections(annId)).toBe(0);
      expect(subjects(await call(search))).toContain('Lunch plans');
    });
  });

  describe('with a second account', () => {
    let brokenId: string;

    beforeAll(async () => {
      brokenId = await storeEmailAccount(t.app, mail, {
        ...users().bob,
        password: WRONG_PASSWORD,
      });
    });

    it('asks to select one when two accounts exist and none is selected', async () => {
      expect(await call({ action: 'search' })).toEqual({
        error:
          'Several email accounts are connected: call select_account with one of: ann@example.test, bob@example.test.',
      });
      // The selected one is used.
      expect(
        await call({ action: 'search', query: 'pizza' }, { accountId: annId }),
      ).toMatchObject({ account: 'ann@example.test', total: 1 });
    });

    it.each([
      [
        { action: 'search' },
        /^IMAP login failed for 'bob' at 127\.0\.0\.1:\d+: wrong user name or password/,
      ],
      [
        { action: 'send', to: ['cat@example.test'], subject: 'x', text: 'y' },
        /^SMTP login failed for 'bob' at 127\.0\.0\.1:\d+: wrong user name or password/,
      ],
    ])(
      'a wrong stored password answers %j with a login error that does not hold it',
      async (args, error) => {
        const written: string[] = [];
        const spies = [process.stdout, process.stderr].map((stream) =>
          jest.spyOn(stream, 'write').mockImplementation((chunk) => {
            written.push(String(chunk));
            return true;
          }),
        );
        let result: Result;
        try {
          result = await call(args, { accountId: brokenId });
        } finally {
          spies.forEach((spy) => spy.mockRestore());
        }
        expect(result.error).toMatch(error);
        expect(JSON.stringify(result)).not.toContain(WRONG_PASSWORD);
        expect(written.join('')).not.toContain(WRONG_PASSWORD);
      },
    );
  });
});
