import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import type {
  ApproveActionResponse,
  PendingActionView,
} from '@metatronos/shared-types';
import type { FakeRecordedRequest } from '../../../tools/fake-llm/fake-llm-server';
import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileDirs } from '../src/files/file-dirs';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { SettingsService } from '../src/settings/settings.service';
import { MongoSandboxService } from '../src/mongo-sandbox/mongo-sandbox.service';
import { AppEventBus } from '../src/events/app-event-bus';
import { TelegramAutoReplyService } from '../src/telegram/telegram-auto-reply.service';
import { WhatsAppAutoReplySettings } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.settings';
import { keptDatabase } from './support/automations-kit';
import { startFakeProviders, useModel } from './support/llm-test-kit';
import {
  createTestApp,
  type TestApp,
  type TestAppOptions,
} from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const TOKEN = '123456:TEST-token-abcdefghijklmnop';
const ANN = { id: 4242, type: 'private' as const, first_name: 'Ann' };
const STRANGER = { id: 9999, type: 'private' as const, first_name: 'Eve' };
const GROUP = { id: -1001234, type: 'supergroup' as const, title: 'Family' };

async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Approves every pending call of `tool`, oldest first, and returns the answers (a send in an auto-reply waits for the owner). */
async function approveAll(
  owner: TestAgent,
  tool: string,
): Promise<ApproveActionResponse[]> {
  const actions = (
    (await owner.get('/api/actions').query({ status: 'pending' }).expect(200))
      .body as PendingActionView[]
  )
    .filter((a) => a.tool === tool)
    .reverse();
  const answers: ApproveActionResponse[] = [];
  for (const action of actions) {
    expect(action).toMatchObject({
      source: 'auto-reply',
      tainted: true,
      effect: 'send',
    });
    answers.push(
      (await owner.post(`/api/actions/${action.id}/approve`).expect(200)).body,
    );
  }
  return answers;
}

function lastUser(request: FakeRecordedRequest): string {
  const messages = (request.body?.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>;
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string'
    ? user.content
    : JSON.stringify(user?.content ?? '');
}

const echo =
  (delay = 0) =>
  (request: FakeRecordedRequest) => ({
    text: [`re: ${lastUser(request)}`],
    chunkDelayMs: delay,
  });

describe('Telegram', () => {
  let fake: Fake;
  let telegram: FakeTelegramServer;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    fake = await startFakeProviders();
  });
  afterAll(async () => {
    fake.restoreEnv();
    await fake.close();
  });
  beforeEach(async () => {
    telegram = await startFakeTelegram({ tokens: [TOKEN] });
    fake.openai.fallback = echo();
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
    await telegram.close();
  });

  async function boot(options: TestAppOptions = {}): Promise<TestApp> {
    const t = await createTestApp({
      ...options,
      now: new Date(),
      beforeInit: (app) => {
        Object.assign(app.get(WhatsAppAutoReplySettings), {
          perContactIntervalMs: 0,
          perMinute: 0,
          loopReplies: 0,
        });
      },
    });
    apps.push(t);
    await useModel(t, 'gpt-4.1-mini');
    return t;
  }

  async function connect(t: TestApp): Promise<void> {
    const owner = await t.owner();
    await owner
      .patch('/api/settings')
      .send({ telegramBotToken: TOKEN, telegramApiRoot: telegram.url })
      .expect(200);
    await waitFor(
      async () =>
        (await owner.get('/api/telegram/status')).body.status === 'connected',
      'the bot to connect',
    );
  }

  const now = (t: TestApp) => Math.floor(t.clock.now().getTime() / 1000);

  it('connects with a saved token, masks it everywhere, and says in plain words when Telegram refuses it', async () => {
    const t = await boot();
    const owner = await t.owner();
    expect((await owner.get('/api/telegram/status').expect(200)).body).toEqual({
      status: 'disconnected',
      username: null,
      reason: null,
    });
    await connect(t);
    const status = (await owner.get('/api/telegram/status')).body;
    expect(status).toEqual({
      status: 'connected',
      username: 'metatron_test_bot',
      reason: null,
    });
    const settings = (await owner.get('/api/settings').expect(200)).body;
    expect(settings.telegramBotToken).toBe('••••mnop');
    expect(JSON.stringify(settings)).not.toContain(TOKEN);

    // A stored token is bound to its server: moving the root needs the token again.
    const moved = await owner
      .patch('/api/settings')
      .send({ telegramApiRoot: 'http://127.0.0.1:1' })
      .expect(400);
    expect(moved.body.message).toEqual([
      `The Telegram bot token must be given again because the Telegram API root changed (from ${telegram.url} to http://127.0.0.1:1): a saved token is only sent to the server it was entered for`,
    ]);
    const malformed = await owner
      .patch('/api/settings')
      .send({ telegramBotToken: 'not a token' })
      .expect(400);
    expect(malformed.body.message).toEqual([
      'The Telegram bot token must be a token as BotFather gives it, like 123456789:AA… (digits, a colon, then letters, digits, - and _)',
    ]);

    // A well-formed but wrong token is tried with getMe first (at the configured root): 400, nothing saved.
    const wrong = '999:WRONG-token-abcdefghijklmnopq';
    const getMes = () =>
      telegram.calls.filter((c) => c.method === 'getMe').length;
    const before = getMes();
    const refused = await owner
      .patch('/api/settings')
      .send({ telegramBotToken: wrong })
      .expect(400);
    expect(refused.body.message).toEqual([
      'Telegram refused the bot token (Unauthorized): copy it again from BotFather. Nothing was saved.',
    ]);
    expect(JSON.stringify(refused.body)).not.toContain('WRONG');
    expect(getMes()).toBe(before + 1);
    expect((await owner.get('/api/settings').expect(200)).body).toEqual(
      settings,
    );
    expect((await owner.get('/api/telegram/status')).body.status).toBe(
      'connected',
    );

    // A server that cannot be reached: 400 in words, nothing saved.
    const closed = createServer();
    await new Promise<void>((resolve) =>
      closed.listen(0, '127.0.0.1', resolve),
    );
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await owner
      .patch('/api/settings')
      .send({
        telegramBotToken: TOKEN,
        telegramApiRoot: `http://127.0.0.1:${port}`,
      })
      .expect(400);
    expect(unreachable.body.message).toEqual([
      `The Telegram bot token could not be checked: http://127.0.0.1:${port} could not be reached (ECONNREFUSED). Nothing was saved.`,
    ]);
    expect(JSON.stringify(unreachable.body)).not.toContain(TOKEN);
    expect((await owner.get('/api/settings').expect(200)).body).toEqual(
      settings,
    );
  });

  it("stores a stranger's message with no model call and no reply, and answers once the owner allows the chat", async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    const requestsBefore = fake.openai.requests.length;
    const seen: Array<{ channel: string; processing: string }> = [];
    t.app
      .get(AppEventBus)
      .on('channels.inbound', ({ channel, processing }) =>
        seen.push({ channel, processing }),
      );
    telegram.receive({ chat: STRANGER, text: 'hello bot', date: now(t) });
    await waitFor(
      async () =>
        (await owner.get('/api/telegram/messages')).body.some(
          (m: { processing: string }) => m.processing === 'skipped',
        ),
      'the stranger message to be skipped',
    );
    const [listed] = (await owner.get('/api/telegram/messages').expect(200))
      .body;
    expect(listed).toMatchObject({
      chatId: '9999',
      fromName: 'Eve',
      text: 'hello bot',
      permitted: false,
      reason: 'no read permission',
    });
    expect(fake.openai.requests.length).toBe(requestsBefore);
    expect(telegram.sent).toEqual([]);

    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '9999',
        displayName: 'Eve',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    telegram.receive({ chat: STRANGER, text: 'now?', date: now(t) });
    await waitFor(() => telegram.sent.length === 1, 'the reply');
    expect(telegram.sent[0]).toMatchObject({ chat_id: '9999' });
    expect(String(telegram.sent[0]['text'])).toContain('now?');
    await t.app.get(TelegramAutoReplyService).idle();
    // The conversation is in its own console chat, the sender's words labelled as theirs.
    const chats = (await owner.get('/api/chats').expect(200)).body as Array<{
      id: string;
      title: string;
      kind: string;
    }>;
    const chat = chats.find((c) => c.kind === 'telegram');
    expect(chat?.title).toBe('Telegram: Eve');
    const messages = (
      await owner.get(`/api/chats/${chat?.id}/messages`).expect(200)
    ).body as Array<{
      role: string;
      author?: { channel: string; name: string };
      delivery?: { channel: string; status: string };
    }>;
    expect(messages[0].author).toMatchObject({
      channel: 'telegram',
      name: 'Eve',
    });
    expect(messages[1].delivery).toMatchObject({
      channel: 'telegram',
      status: 'sent',
    });
    // The console's list follows the auto-reply live: its state and its answer, without a reload.
    expect(seen).toEqual([
      { channel: 'telegram', processing: 'working' },
      { channel: 'telegram', processing: 'skipped' },
      { channel: 'telegram', processing: 'working' },
      { channel: 'telegram', processing: 'done' },
    ]);
    const listedNow = (await owner.get('/api/telegram/messages').expect(200))
      .body as Array<{ text: string }>;
    expect(listedNow.find((m) => m.text === 'now?')).toMatchObject({
      text: 'now?',
      processing: 'done',
      permitted: true,
      reply: expect.stringContaining('now?'),
    });
  });

  it('answers in a permitted group only when the bot is mentioned or answered, as a reply to that message', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: String(GROUP.id),
        displayName: 'Family',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    const from = { id: 5, is_bot: false, first_name: 'Bob' };
    telegram.receive({
      chat: GROUP,
      from,
      text: 'just chatting',
      date: now(t),
    });
    const mentioned = telegram.receive({
      chat: GROUP,
      from,
      text: 'what time is it?',
      mention: true,
      date: now(t),
    });
    await waitFor(() => telegram.sent.length === 1, 'the group reply');
    await t.app.get(TelegramAutoReplyService).idle();
    expect(telegram.sent[0]).toMatchObject({
      chat_id: String(GROUP.id),
      reply_parameters: { message_id: mentioned.messageId },
    });
    expect(String(telegram.sent[0]['text'])).toContain('what time is it?');
    const listed = (await owner.get('/api/telegram/messages')).body as Array<{
      text: string;
      processing: string;
    }>;
    expect(listed.find((m) => m.text === 'just chatting')?.processing).toBe(
      'skipped',
    );
  });

  it("waits out Telegram's 429 retry_after and then sends", async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '4242',
        displayName: 'Ann',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    telegram.fail({
      method: 'sendMessage',
      status: 429,
      description: 'Too Many Requests: retry after 1',
      retryAfter: 1,
    });
    telegram.receive({ chat: ANN, text: 'hi', date: now(t) });
    await waitFor(() => telegram.sent.length === 1, 'the reply', 15_000);
    const attempts = telegram.calls.filter((c) => c.method === 'sendMessage');
    expect(attempts).toHaveLength(2);
  });

  it('reacts to the message being answered, and sends a cache file only to a trusted chat', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    const ann = (
      await owner
        .post('/api/telegram/permissions')
        .send({
          chatId: '4242',
          displayName: 'Ann',
          canRead: true,
          canReply: true,
        })
        .expect(200)
    ).body as { id: string };
    // Another contact's chat, which Ann's turns must never reach.
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '5151',
        displayName: 'Bob',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    const dirs = t.app.get(FileDirs).ensure();
    writeFileSync(join(dirs.file_cache_dir, 'notes.txt'), 'hello file');

    // Untrusted: the reaction is offered, the file tools are not; another contact's chat is refused.
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'telegram_react',
            arguments: { emoji: '👎', chat_id: '5151', message_id: 1 },
          },
          { name: 'telegram_react', arguments: { emoji: '👍' } },
        ],
      },
      { text: ['done'] },
    );
    const first = telegram.receive({
      chat: ANN,
      text: 'thanks!',
      date: now(t),
    });
    await waitFor(() => telegram.sent.length === 1, 'the reply');
    await t.app.get(TelegramAutoReplyService).idle();
    expect(telegram.reactions).toEqual([
      expect.objectContaining({
        chat_id: '4242',
        message_id: first.messageId,
        reaction: [{ type: 'emoji', emoji: '👍' }],
      }),
    ]);
    const offered = (n: number) =>
      (
        (fake.openai.requests.at(n)?.body?.tools ?? []) as Array<{
          function: { name: string };
        }>
      ).map((tool) => tool.function.name);
    expect(JSON.stringify(fake.openai.requests.at(-1)?.body)).toContain(
      'may not reach another contact',
    );
    expect(offered(-1)).toContain('telegram_react');
    expect(offered(-1)).not.toContain('telegram_send_file');
    expect(offered(-1)).not.toContain('telegram_manage_permission');

    await owner
      .patch(`/api/telegram/permissions/${ann.id}`)
      .send({ trusted: true })
      .expect(200);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'telegram_send_file',
            arguments: { path: 'file_cache_dir/../state/../../secrets' },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'telegram_send_file',
            arguments: { path: 'file_cache_dir/notes.txt', caption: 'here' },
          },
          {
            name: 'telegram_send_file',
            arguments: { path: 'file_cache_dir/notes.txt', chat_id: '5151' },
          },
        ],
      },
      { text: ['sent'] },
    );
    telegram.receive({ chat: ANN, text: 'send me the notes', date: now(t) });
    await waitFor(() => telegram.sent.length === 2, 'the second reply');
    await t.app.get(TelegramAutoReplyService).idle();
    // A file is a send: an auto-reply turn leaves it for the owner to approve.
    expect(telegram.uploads).toEqual([]);
    const answers = await approveAll(owner, 'telegram_send_file');
    expect(answers).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: expect.stringContaining('leaves file_cache_dir'),
      }),
      expect.objectContaining({ status: 'done' }),
    ]);
    expect(telegram.uploads).toEqual([
      expect.objectContaining({
        method: 'sendDocument',
        chatId: '4242',
        filename: 'notes.txt',
      }),
    ]);
  });

  it("keeps strangers' messages and the chats of revoked senders out of db_query", async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    const ann = (
      await owner
        .post('/api/telegram/permissions')
        .send({ chatId: '4242', displayName: 'Ann', canRead: true })
        .expect(200)
    ).body as { id: string };
    telegram.receive({ chat: ANN, text: 'ann-secret-words', date: now(t) });
    telegram.receive({ chat: STRANGER, text: 'eve-words', date: now(t) });
    await waitFor(
      async () =>
        (
          (await owner.get('/api/telegram/messages')).body as Array<{
            processing: string;
          }>
        ).filter((m) => m.processing === 'done' || m.processing === 'skipped')
          .length === 2,
      'both messages handled',
    );
    await t.app.get(TelegramAutoReplyService).idle();
    const sandbox = t.app.get(MongoSandboxService);
    const seen = async (collection: string) =>
      JSON.stringify(await sandbox.execute({ operation: 'find', collection }));
    expect(await seen('telegram_messages')).toContain('ann-secret-words');
    expect(await seen('telegram_messages')).not.toContain('eve-words');
    expect(await seen('messages')).toContain('ann-secret-words');

    await owner
      .patch(`/api/telegram/permissions/${ann.id}`)
      .send({ canRead: false })
      .expect(200);
    expect(await seen('telegram_messages')).not.toContain('ann-secret-words');
    expect(await seen('messages')).not.toContain('ann-secret-words');
    // The owner still sees everything in the console.
    expect(
      JSON.stringify((await owner.get('/api/telegram/messages')).body),
    ).toContain('eve-words');
  });

  it('routes contacts_send to tg:<chat id> for chats with reply permission only', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '4242',
        displayName: 'Ann',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    await owner
      .post('/api/telegram/permissions')
      .send({ chatId: '5151', displayName: 'Reader', canRead: true })
      .expect(200);
    const send = async (args: unknown) =>
      JSON.parse(
        await t.app.get(AiToolRegistry).execute('contacts_send', args, {
          source: 'chat',
          settings: await t.app.get(SettingsService).get(),
          chatId: null,
          messageId: null,
          signal: new AbortController().signal,
        }),
      ) as Record<string, unknown>;
    expect(
      await send({ contact_id: 'tg:4242', message_text: 'Dinner at 8?' }),
    ).toMatchObject({ to: 'tg:4242' });
    expect(telegram.sent).toEqual([
      expect.objectContaining({ chat_id: '4242', text: 'Dinner at 8?' }),
    ]);
    expect(
      String((await send({ contact_id: 'tg:5151', message_text: 'x' })).error),
    ).toContain('No reply permission for tg:5151');
    expect(
      String((await send({ contact_id: 'tg:abc', message_text: 'x' })).error),
    ).toContain('tg:<chat id>');
    expect(telegram.sent).toHaveLength(1);
  });

  it('gives the model inbound photos and documents as attachments, and keeps voice notes in the cache dir', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '4242',
        displayName: 'Ann',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    const PNG = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
      'base64',
    );
    const lastUserContent = () =>
      JSON.stringify(
        (
          fake.openai.requests.at(-1)?.body?.messages as Array<{
            role: string;
            content: unknown;
          }>
        )
          .filter((m) => m.role === 'user')
          .at(-1),
      );
    const turn = async (
      file: Parameters<typeof telegram.receive>[0]['file'],
      text: string,
    ) => {
      const before = telegram.sent.length;
      telegram.receive({ chat: ANN, text, date: now(t), file });
      await waitFor(() => telegram.sent.length === before + 1, 'the reply');
      await t.app.get(TelegramAutoReplyService).idle();
      return lastUserContent();
    };

    const photo = await turn({ kind: 'photo', bytes: PNG }, 'what is this?');
    expect(photo).toContain('what is this?');
    expect(photo).toContain('data:image/png;base64,');

    const doc = await turn(
      {
        kind: 'document',
        bytes: Buffer.from('Milk, eggs, bread'),
        name: 'shopping.txt',
      },
      '',
    );
    expect(doc).toContain('Milk, eggs, bread');

    const voice = await turn(
      { kind: 'voice', bytes: Buffer.from('OggS fake opus') },
      '',
    );
    expect(voice).toContain('file_cache_dir/telegram/voice-4242-');
    const saved = JSON.parse(voice).content.match(
      /file_cache_dir\/telegram\/[^ ;]+/,
    )[0];
    const resolved = t.app.get(FileDirs).resolve(saved);
    expect(resolved.ok && readFileSync(resolved.absolute, 'utf8')).toBe(
      'OggS fake opus',
    );

    const refused = await turn(
      {
        kind: 'document',
        bytes: Buffer.from('PK\u0003\u0004zip'),
        name: 'archive.zip',
      },
      'see attached',
    );
    expect(refused).toContain('see attached');
    expect(refused).toContain('could not be kept');
    // The console shows the photo on the contact's message.
    const chats = (await owner.get('/api/chats').expect(200)).body as Array<{
      id: string;
      kind: string;
    }>;
    const chat = chats.find((c) => c.kind === 'telegram');
    const messages = (
      await owner.get(`/api/chats/${chat?.id}/messages`).expect(200)
    ).body as Array<{
      role: string;
      attachments?: Array<{ name: string }>;
    }>;
    expect(
      messages
        .filter((m) => m.role === 'user')
        .map((m) => m.attachments?.map((a) => a.name) ?? []),
    ).toEqual([['photo-1.jpg'], ['shopping.txt'], [], []]);
  });

  it('sends a voice note from the cache dir to a trusted chat, and refuses a file over 20 MiB or outside the cache dir', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    await owner
      .post('/api/telegram/permissions')
      .send({
        chatId: '4242',
        displayName: 'Ann',
        canRead: true,
        canReply: true,
        trusted: true,
      })
      .expect(200);
    const dirs = t.app.get(FileDirs).ensure();
    writeFileSync(join(dirs.file_cache_dir, 'hello.ogg'), 'OggS voice');
    writeFileSync(
      join(dirs.file_cache_dir, 'big.ogg'),
      Buffer.alloc(20 * 1024 * 1024 + 1),
    );
    writeFileSync(join(dirs.file_state_dir, 'private.ogg'), 'state');
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'telegram_send_voice',
            arguments: { path: 'file_cache_dir/big.ogg' },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'telegram_send_voice',
            arguments: { path: 'file_state_dir/private.ogg' },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'telegram_send_voice',
            arguments: { path: 'file_cache_dir/hello.ogg' },
          },
        ],
      },
      { text: ['sent'] },
    );
    telegram.receive({ chat: ANN, text: 'say hi', date: now(t) });
    await waitFor(() => telegram.sent.length === 1, 'the reply');
    await t.app.get(TelegramAutoReplyService).idle();
    expect(telegram.uploads).toEqual([]);
    const answers = await approveAll(owner, 'telegram_send_voice');
    expect(answers).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: expect.stringContaining('at most 20 MiB can be sent'),
      }),
      expect.objectContaining({
        status: 'failed',
        error: expect.stringContaining(
          'Only files in file_cache_dir can be sent',
        ),
      }),
      expect.objectContaining({ status: 'done' }),
    ]);
    expect(telegram.uploads).toEqual([
      expect.objectContaining({
        method: 'sendVoice',
        chatId: '4242',
        filename: 'hello.ogg',
      }),
    ]);
  });

  it('takes a chat id as a JSON number in every Telegram route and tool', async () => {
    const t = await boot();
    await connect(t);
    const owner = await t.owner();
    const created = (
      await owner
        .post('/api/telegram/permissions')
        .send({ chatId: 4242, displayName: 'Ann', canRead: true })
        .expect(200)
    ).body;
    expect(created.chatId).toBe('4242');
    // Not an integer: still refused.
    await owner
      .post('/api/telegram/permissions')
      .send({ chatId: 42.5, displayName: 'Half' })
      .expect(400);
    const run = async (name: string, args: Record<string, unknown>) =>
      JSON.parse(
        await t.app.get(AiToolRegistry).execute(name, args, {
          source: 'chat',
          settings: await t.app.get(SettingsService).get(),
          chatId: null,
          messageId: null,
          signal: new AbortController().signal,
        }),
      ) as Record<string, unknown>;
    expect(
      await run('telegram_manage_permission', {
        action: 'update',
        chat_id: 4242,
        can_reply: true,
      }),
    ).not.toHaveProperty('error');
    expect(
      (await owner.get('/api/telegram/permissions').expect(200)).body,
    ).toEqual([expect.objectContaining({ chatId: '4242', canReply: true })]);
    expect(
      await run('telegram_react', {
        chat_id: 4242,
        message_id: '7',
        emoji: '👍',
      }),
    ).toMatchObject({ ok: true, chat_id: '4242', message_id: 7 });
    expect(
      await run('telegram_react', { chat_id: [4242], emoji: '👍' }),
    ).toEqual({ error: "Argument 'chat_id' must be a string (got array)" });
  });

  it('validates permissions and writes nothing on a bad request', async () => {
    const t = await boot();
    const owner = await t.owner();
    for (const body of [
      { chatId: 'abc', displayName: 'X' },
      { chatId: '12', displayName: '' },
      { chatId: '12' },
      { chatId: '12', displayName: 'X', canRead: 'yes' },
      { chatId: null, displayName: 'X' },
    ])
      await owner.post('/api/telegram/permissions').send(body).expect(400);
    expect((await owner.get('/api/telegram/permissions')).body).toEqual([]);
    const created = (
      await owner
        .post('/api/telegram/permissions')
        .send({ chatId: '-100123', displayName: 'Group' })
        .expect(200)
    ).body;
    expect(created).toMatchObject({ canRead: false, canReply: false });
    await owner
      .post('/api/telegram/permissions')
      .send({ chatId: '-100123', displayName: 'Again' })
      .expect(409);
    await owner
      .patch(`/api/telegram/permissions/${created.id}`)
      .send({ canRead: 1 })
      .expect(400);
    await owner
      .patch('/api/telegram/permissions/000000000000000000000000')
      .send({ canRead: true })
      .expect(404);
    await owner.delete(`/api/telegram/permissions/${created.id}`).expect(200);
    await owner.delete(`/api/telegram/permissions/${created.id}`).expect(404);
    await t.http().get('/api/telegram/status').expect(401);
  });

  it('answers a message received just before a crash exactly once after the restart', async () => {
    const database = keptDatabase();
    let t = await boot({ database });
    try {
      await connect(t);
      const owner = await t.owner();
      await owner
        .post('/api/telegram/permissions')
        .send({
          chatId: '4242',
          displayName: 'Ann',
          canRead: true,
          canReply: true,
        })
        .expect(200);
      // The model is slow: the app stops while the turn runs, before any send.
      fake.openai.fallback = echo(2_000);
      telegram.receive({ chat: ANN, text: 'are you there?', date: now(t) });
      await waitFor(
        () => telegram.acknowledged > 0 || fake.openai.requests.length > 0,
        'the message to be taken',
      );
      await waitFor(
        async () =>
          (await owner.get('/api/telegram/messages')).body[0]?.processing ===
          'working',
        'the turn to start',
      );
      await t.close();
      expect(telegram.sent).toEqual([]);

      fake.openai.fallback = echo();
      t = await boot({ database });
      await connect(t);
      await waitFor(
        () => telegram.sent.length === 1,
        'the reply after restart',
      ).catch(async (error: Error) => {
        const docs = await t.app
          .get<Connection>(getConnectionToken())
          .collection('telegram_messages')
          .find({})
          .toArray();
        throw new Error(
          `${error.message}: ${JSON.stringify(docs)} ${JSON.stringify(telegram.calls.map((c) => c.method))}`,
        );
      });
      await t.app.get(TelegramAutoReplyService).idle();
      // Long enough for a second poll or scan to have sent a duplicate.
      await new Promise((r) => setTimeout(r, 300));
      expect(telegram.sent).toHaveLength(1);
      expect(String(telegram.sent[0]['text'])).toContain('are you there?');
    } finally {
      await t.app.get<Connection>(getConnectionToken()).dropDatabase();
    }
  }, 40_000);
});
