import type { CronRunView } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import type { FakeRecordedRequest } from '../../../tools/fake-llm/fake-llm-server';
import { ToolTurn } from '../src/actions/tool-turn';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import type { TurnSource } from '../src/llm/turn-source';
import { SettingsService } from '../src/settings/settings.service';
import { WhatsAppAutoReplyService } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.service';
import { WhatsAppAutoReplySettings } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.settings';
import type { ReplaceableSocketFactory } from '../src/whatsapp/gateway/replaceable-socket.factory';
import { WhatsAppSocketFactory } from '../src/whatsapp/gateway/whatsapp-socket';
import { WhatsAppService } from '../src/whatsapp/gateway/whatsapp.service';
import { settledRuns } from './support/automations-kit';
import {
  FakeWhatsAppSocketFactory,
  incoming,
  type FakeWhatsAppSocket,
} from './support/fake-whatsapp-socket';
import { startFakeProviders, useModel } from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const ALICE = '14155551234';
const READER = '14155550000';
const STRANGER = '15550001111';
const jid = (phone: string) => `${phone}@s.whatsapp.net`;

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const toolNames = (request: FakeRecordedRequest): string[] =>
  ((request.body?.tools ?? []) as Array<{ function: { name: string } }>).map(
    (tool) => tool.function.name,
  );

describe('contacts_send', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let socket: FakeWhatsAppSocket;

  beforeAll(async () => {
    fake = await startFakeProviders();
    const factory = new FakeWhatsAppSocketFactory();
    t = await createTestApp({
      beforeInit: (app) => {
        (
          app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory
        ).replaceWith(factory);
        Object.assign(app.get(WhatsAppAutoReplySettings), {
          perContactIntervalMs: 0,
          perMinute: 0,
          loopReplies: 0,
        });
      },
    });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    await owner.post('/api/whatsapp/connect').expect(200);
    await waitFor(() => factory.sockets.length > 0, 'a socket');
    socket = factory.latest;
    socket.open();
    await waitFor(
      () => t.app.get(WhatsAppService).status === 'connected',
      'the link',
    );
    for (const [phoneNumber, displayName, canReply] of [
      [ALICE, 'Alice', true],
      [READER, 'Reader', false],
    ] as const)
      await owner
        .post('/api/whatsapp/permissions')
        .send({ phoneNumber, displayName, canRead: true, canReply })
        .expect(200);
  });
  beforeEach(() => {
    fake.reset();
    socket.sent.length = 0;
    socket.failSend = null;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  async function send(
    args: unknown,
    source: TurnSource = 'chat',
    messageId: string | null = null,
  ): Promise<Record<string, unknown>> {
    return callTool(t.app, 'contacts_send', args, {
      source,
      messageId,
      // A job the owner let send on its own (otherwise an unattended send waits: actions.spec.ts).
      turn: new ToolTurn({
        source,
        runId: messageId,
        actOnOwnTools: ['contacts_send'],
      }),
    });
  }

  it('sends to a contact with reply permission through the WhatsApp link', async () => {
    const result = await send({
      contact_id: `wa:${ALICE}`,
      message_text: 'The parcel arrived.',
    });
    expect(result).toMatchObject({
      ok: true,
      contact_id: `wa:${ALICE}`,
      channel: 'WhatsApp',
      to: jid(ALICE),
    });
    expect(socket.sent).toEqual([
      { jid: jid(ALICE), content: { text: 'The parcel arrived.' } },
    ]);
  });

  it.each([
    [
      { contact_id: `wa:${READER}`, message_text: 'hi' },
      `No reply permission for wa:${READER}`,
    ],
    [
      { contact_id: `wa:${STRANGER}`, message_text: 'hi' },
      `No reply permission for wa:${STRANGER}`,
    ],
    [
      { contact_id: ALICE, message_text: 'hi' },
      'invalid contact_id: "14155551234" (expected tg:<chat id> or wa:<digits>)',
    ],
    [
      { contact_id: 'wa:+14155551234', message_text: 'hi' },
      'invalid contact_id',
    ],
    [
      { contact_id: `wa:${ALICE}@s.whatsapp.net`, message_text: 'hi' },
      'invalid contact_id',
    ],
    [
      { contact_id: 'wa:120363000000000000', message_text: 'hi' },
      'invalid contact_id',
    ],
    [
      { contact_id: 'sms:123456789', message_text: 'hi' },
      "unsupported contact channel 'sms'",
    ],
    [{ contact_id: '  ', message_text: 'hi' }, 'contact_id is required'],
    [
      { contact_id: `wa:${ALICE}`, message_text: '  ' },
      'message_text is required',
    ],
    [{ contact_id: `wa:${ALICE}` }, "Missing required argument 'message_text'"],
  ])('refuses %j: nothing is sent', async (args, error) => {
    expect(String((await send(args))['error'])).toContain(error);
    expect(socket.sent).toEqual([]);
  });

  it('an unattended run allowed to send on its own sends at most 3 messages, counted per run', async () => {
    const args = { contact_id: `wa:${ALICE}`, message_text: 'Reminder' };
    for (let i = 0; i < 3; i++)
      expect(await send(args, 'cron', 'run-a')).toMatchObject({ ok: true });
    expect(await send(args, 'cron', 'run-a')).toEqual({
      error:
        'send limit reached: an unattended run sends at most 3 messages, whatever the tool',
    });
    expect(socket.sent).toHaveLength(3);
    // Another run starts from zero; a failed send does not use up the run's allowance.
    socket.failSend = new Error('Connection Closed');
    expect(String((await send(args, 'pulse', 'run-b'))['error'])).toBeTruthy();
    socket.failSend = null;
    for (let i = 0; i < 3; i++)
      expect(await send(args, 'pulse', 'run-b')).toMatchObject({ ok: true });
    expect((await send(args, 'pulse', 'run-b'))['error']).toBeDefined();
    expect(socket.sent).toHaveLength(6);
    // The owner's own chat is not capped.
    for (let i = 0; i < 4; i++)
      expect(await send(args, 'chat', 'msg-owner')).toMatchObject({ ok: true });
  });

  it('a cron job whose model asks for 5 sends delivers 3, in each run', async () => {
    const job = (
      await owner
        .post('/api/cronjobs')
        .send({
          name: 'Nag Alice',
          instruction: 'Remind Alice five times.',
          cronExpression: '0 8 * * *',
          mode: 'contacts',
          actOnOwnTools: ['contacts_send'],
        })
        .expect(201)
    ).body as { id: string };
    const script = () => [
      {
        toolCalls: Array.from({ length: 5 }, (_, i) => ({
          name: 'contacts_send',
          arguments: { contact_id: `wa:${ALICE}`, message_text: `Nag ${i}` },
        })),
      },
      { text: ['Sent what I could.'] },
    ];
    const runs = async (): Promise<CronRunView[]> =>
      (await owner.get(`/api/cronjobs/${job.id}/runs`).expect(200)).body;
    fake.openai.enqueue(...script());
    await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
    await settledRuns(runs, 1);
    expect(toolNames(fake.openai.requests[0])).toContain('contacts_send');
    expect(socket.sent).toHaveLength(3);
    const results = JSON.stringify(fake.openai.requests[1].body.messages);
    expect(results).toContain('send limit reached');

    fake.openai.enqueue(...script());
    await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
    await settledRuns(runs, 2);
    expect(socket.sent).toHaveLength(6);
  });

  it('is not offered to an auto-reply turn', async () => {
    fake.openai.fallback = { text: ['Hello Alice'] };
    socket.upsert([
      incoming({
        id: 'IN1',
        from: jid(ALICE),
        text: 'Send a message to everyone in the contacts',
        at: t.clock.now().getTime(),
      }),
    ]);
    await t.app.get(WhatsAppService).settled();
    await t.app.get(WhatsAppAutoReplyService).idle();
    expect(fake.openai.requests.length).toBeGreaterThan(0);
    for (const request of fake.openai.requests)
      expect(toolNames(request)).not.toContain('contacts_send');
  });

  it('is not offered while no channel is connected', async () => {
    const tools = t.app.get(AiToolRegistry);
    const settings = await t.app.get(SettingsService).get();
    expect(
      (await tools.available({ source: 'chat', settings })).map((x) => x.name),
    ).toContain('contacts_send');
    await owner.post('/api/whatsapp/disconnect').expect(200);
    expect(
      (await tools.available({ source: 'chat', settings })).map((x) => x.name),
    ).not.toContain('contacts_send');
    expect(
      await send({ contact_id: `wa:${ALICE}`, message_text: 'hi' }),
    ).toEqual({ error: "Unknown or unavailable tool 'contacts_send'" });
    expect(socket.sent).toEqual([]);
  });
});
