import type {
  BudgetView,
  ChatMessage,
  UsageReport,
} from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import type { FakeRecordedRequest } from '../../../tools/fake-llm/fake-llm-server';
import {
  startFakeRealtimeServer,
  type FakeControl,
  type FakeRealtimeServer,
} from '../../../tools/fake-realtime/fake-realtime-server';
import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import { VoiceCallsService } from '../src/voice/voice-calls.service';
import {
  chatClient,
  eventsNamed,
  OPENAI_TEST_KEY,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

/** Model calls outside the chat adapters held to the budget: voice responses and images; cached input priced. */

const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=rtpmap:111 opus/48000/2',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  '',
].join('\r\n');

const NO_CAPS = { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null };

async function until<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

const budgetOf = async (owner: TestAgent): Promise<BudgetView> =>
  (await owner.get('/api/budget').expect(200)).body;

describe('Spend control: voice calls', () => {
  let fake: FakeRealtimeServer;
  let t: TestApp;
  let owner: TestAgent;
  let savedBase: string | undefined;

  /**
   * Text free, audio output $1 per 1,000 tokens, audio input $1 per million: a
   * response's worst case is the voice output limit (100) × $0.001 = $0.10 plus its
   * prompt (a few thousand tokens) at the audio input price, about a cent.
   */
  const PRICES = [
    {
      model: 'gpt-realtime',
      inputPerMTok: 0,
      outputPerMTok: 0,
      audioInputPerMTok: 1,
      audioOutputPerMTok: 1000,
    },
  ];

  beforeAll(async () => {
    fake = await startFakeRealtimeServer();
    savedBase = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.baseUrl;
    t = await createTestApp({ env: { VOICE_SILENCE_SECONDS: '600' } });
    owner = await t.owner();
    await owner
      .patch('/api/settings')
      .send({
        openaiApiKey: OPENAI_TEST_KEY,
        modelPrices: PRICES,
        outputLimits: { voice: 100 },
      })
      .expect(200);
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
    if (savedBase === undefined) delete process.env['OPENAI_BASE_URL'];
    else process.env['OPENAI_BASE_URL'] = savedBase;
  });

  afterEach(async () => {
    const live = t.app.get(VoiceCallsService).current();
    if (live) await owner.delete(`/api/voice/calls/${live.callId}`);
    fake.reset();
  });

  const setCaps = (budget: object) =>
    owner
      .patch('/api/settings')
      .send({ budget: { ...NO_CAPS, ...budget } })
      .expect(200);

  async function startCall(): Promise<{
    callId: string;
    chatId: string;
    control: FakeControl;
  }> {
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(201);
    const control = await fake.control(res.body.callId);
    return { callId: res.body.callId, chatId: res.body.chatId, control };
  }

  /** One spoken response: 100 audio tokens out ($0.10), 40 text tokens out (free), 1,000 audio in, half of it cached (free). */
  function respond(control: FakeControl, id: string, transcript: string) {
    control.send({ type: 'response.created', response: { id } });
    control.send({
      type: 'response.output_audio_transcript.done',
      response_id: id,
      transcript,
    });
    control.send({
      type: 'response.done',
      response: {
        id,
        status: 'completed',
        output: [],
        usage: {
          input_tokens: 1_200,
          output_tokens: 140,
          total_tokens: 1_340,
          input_token_details: {
            text_tokens: 200,
            audio_tokens: 1_000,
            cached_tokens: 600,
            cached_tokens_details: { text_tokens: 100, audio_tokens: 500 },
          },
          output_token_details: { text_tokens: 40, audio_tokens: 100 },
        },
      },
    });
  }
  /** 500 uncached audio input tokens × $0.000001 + 100 audio output tokens × $0.001. */
  const RESPONSE_USD = 0.0005 + 0.1;

  it('refuses to start a call the caps leave no room for, in words, and calls no provider', async () => {
    await setCaps({ dailyUsd: 0.05 });
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(409);
    expect(res.body.message).toMatch(
      /^Today's budget of \$0\.05 would be passed: \$0\.00 is spent and this call could cost up to \$0\.1\d+\. Raise it in Settings to call\.$/,
    );
    expect(fake.calls).toHaveLength(0);
    expect((await budgetOf(owner)).reservedUsd).toBe(0);
  });

  it('holds each response, prices audio apart from text, and ends the call politely at the cap', async () => {
    // Room for two responses ($0.1005 each) and the hold of the second, not for a third hold (~$0.11).
    await setCaps({ dailyUsd: 0.25 });
    const before = (await budgetOf(owner)).spent.todayUsd;
    const { callId, chatId, control } = await startCall();
    // The session carries the voice output limit, so a response's worst case is known.
    expect(fake.calls[0].session).toMatchObject({ max_output_tokens: 100 });
    // The first response is held before the call starts.
    const held = (await budgetOf(owner)).reservedUsd;
    expect(held).toBeGreaterThanOrEqual(0.1);

    respond(control, 'resp_1', 'Hello there.');
    await until(
      () => budgetOf(owner),
      (b) => b.spent.todayUsd >= before + RESPONSE_USD - 1e-9,
      'the first response counted',
    );
    respond(control, 'resp_2', 'Anything else?');
    const spent = await until(
      () => budgetOf(owner),
      (b) => b.spent.todayUsd >= before + 2 * RESPONSE_USD - 1e-9,
      'the second response counted',
    );
    expect(spent.spent.todayUsd).toBeCloseTo(before + 2 * RESPONSE_USD, 9);

    // A third response would not fit: the call asks the model for a short goodbye, without tools.
    const goodbye = await control.waitFor(
      (e) =>
        e['type'] === 'response.create' &&
        typeof (e['response'] as { instructions?: unknown } | undefined)
          ?.instructions === 'string',
    );
    expect(goodbye['response']).toMatchObject({
      tools: [],
      tool_choice: 'none',
      max_output_tokens: 300,
    });
    expect(
      (goodbye['response'] as { instructions: string }).instructions,
    ).toMatch(/budget[\s\S]*Today's budget of \$0\.25[\s\S]*goodbye/i);
    expect(fake.calls[0].hungUp).toBe(false);

    // The goodbye is spoken (it may go over the cap: a sentence), then the call is hung up.
    control.send({ type: 'response.created', response: { id: 'resp_bye' } });
    control.send({
      type: 'response.output_audio_transcript.done',
      response_id: 'resp_bye',
      transcript: 'The budget is used up for today, so I have to go. Goodbye!',
    });
    control.send({
      type: 'response.done',
      response: {
        id: 'resp_bye',
        status: 'completed',
        output: [],
        usage: {
          input_tokens: 0,
          output_tokens: 10,
          total_tokens: 10,
          output_token_details: { text_tokens: 0, audio_tokens: 10 },
        },
      },
    });
    await until(() => fake.calls[0].hungUp, Boolean, 'the hang-up');
    expect(t.app.get(VoiceCallsService).current()).toBeNull();
    const after = await budgetOf(owner);
    expect(after.spent.todayUsd).toBeCloseTo(
      before + 2 * RESPONSE_USD + 0.01,
      9,
    );
    expect(after.reservedUsd).toBe(0);

    // The chat keeps the notice in plain words, and the goodbye.
    const stored: ChatMessage[] = (
      await owner.get(`/api/chats/${chatId}/messages`).expect(200)
    ).body;
    const words = stored.map((m) => m.content).join('\n');
    expect(words).toMatch(
      /\(Today's budget of \$0\.25 would be passed[^)]*The call ended\.\)/,
    );
    expect(words).toContain('so I have to go. Goodbye!');
    // Usage was recorded once per response, priced the same way.
    const usage: UsageReport = (await owner.get('/api/usage').expect(200)).body;
    const voice = usage.bySource.find((r) => r.source === 'voice');
    expect(voice?.costUsd).toBeCloseTo(2 * RESPONSE_USD + 0.01, 6);
    expect(callId).toBeTruthy();
  });

  it('releases the held response when the owner hangs up between responses', async () => {
    await setCaps({});
    const { callId } = await startCall();
    expect((await budgetOf(owner)).reservedUsd).toBeGreaterThan(0);
    await owner.delete(`/api/voice/calls/${callId}`).expect(204);
    await until(
      () => budgetOf(owner),
      (b) => b.reservedUsd === 0,
      'the hold released',
    );
  });
});

describe('Spend control: images and cached input', () => {
  type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  /**
   * The chat model: input $1/MTok, cached input $0.10/MTok, output free. The image
   * model: output $10/MTok, so an image's worst case (6,240 tokens) is $0.0624 and
   * the fake's 20 reported output tokens cost $0.0002.
   */
  const PRICES = [
    {
      model: 'gpt-4.1-mini',
      inputPerMTok: 1,
      cachedInputPerMTok: 0.1,
      outputPerMTok: 0,
    },
    { model: 'gpt-image-1', inputPerMTok: 0, outputPerMTok: 10 },
  ];

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
    await owner
      .patch('/api/settings')
      .send({
        modelPrices: PRICES,
        imageModel: 'gpt-image-1',
        outputLimits: { chat: 100 },
      })
      .expect(200);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const echo = (request: FakeRecordedRequest) => {
    const last = request.body.messages.at(-1) as { content: string };
    return { text: [`Tool said: ${last.content}`] };
  };

  async function askForImage(allowOverBudget = false): Promise<string> {
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_img',
            name: 'generate_image',
            arguments: { prompt: 'A fox', shortDescription: 'Fox' },
          },
        ],
        usage: { promptTokens: 0, completionTokens: 0 },
      },
      (request) => ({
        ...echo(request),
        usage: { promptTokens: 0, completionTokens: 0 },
      }),
    );
    const events = await client.send(
      chat.id,
      'draw a fox',
      allowOverBudget ? { allowOverBudget } : {},
    );
    return (eventsNamed(events, 'tool_result')[0] as { result: string }).result;
  }

  it('counts an image at its reported tokens, and refuses one whose worst case would cross a cap', async () => {
    await owner
      .patch('/api/settings')
      .send({ budget: { ...NO_CAPS, dailyUsd: 1 } })
      .expect(200);
    const before = (await budgetOf(owner)).spent.todayUsd;
    const made = await askForImage();
    expect(JSON.parse(made)).toMatchObject({ success: true });
    expect(fake.openaiImages.requests).toHaveLength(1);
    const after = await budgetOf(owner);
    expect(after.spent.todayUsd).toBeCloseTo(before + 0.0002, 9);
    expect(after.reservedUsd).toBe(0);
    const usage: UsageReport = (await owner.get('/api/usage').expect(200)).body;
    expect(
      usage.byModel.find((r) => r.model === 'gpt-image-1')?.costUsd,
    ).toBeCloseTo(0.0002, 9);

    // Room left: less than the image's worst case ($0.0624).
    await owner
      .patch('/api/settings')
      .send({ budget: { ...NO_CAPS, dailyUsd: before + 0.0002 + 0.05 } })
      .expect(200);
    const refused = await askForImage();
    expect(JSON.parse(refused).error).toMatch(
      /^No image was made: Today's budget of \$0\.05 would be passed: .* this call could cost up to \$0\.06\b/,
    );
    expect(fake.openaiImages.requests).toHaveLength(1);
    expect((await budgetOf(owner)).reservedUsd).toBe(0);

    // A reply the owner allowed over the caps may make its image too.
    const allowed = await askForImage(true);
    expect(JSON.parse(allowed)).toMatchObject({ success: true });
    expect(fake.openaiImages.requests).toHaveLength(2);
    expect((await budgetOf(owner)).reservedUsd).toBe(0);
  });

  it('prices the input tokens the provider served from its cache at the cached price', async () => {
    await owner.patch('/api/settings').send({ budget: NO_CAPS }).expect(200);
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    const before = (await budgetOf(owner)).spent.todayUsd;
    fake.openai.enqueue({
      text: ['Hi.'],
      usage: {
        promptTokens: 1_000_000,
        cachedTokens: 800_000,
        completionTokens: 10,
      },
    });
    await client.send(chat.id, 'hello');
    // 200,000 × $1/MTok + 800,000 × $0.10/MTok.
    const after = await budgetOf(owner);
    expect(after.spent.todayUsd - before).toBeCloseTo(0.2 + 0.08, 9);
  });
});

describe("Spend control: notices to the owner's own Telegram chat", () => {
  type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
  const TOKEN = '123456:TEST-token-abcdefghijklmnop';
  const OWNER_CHAT = 4242;
  let fake: Fake;
  let telegram: FakeTelegramServer;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    telegram = await startFakeTelegram({ tokens: [TOKEN] });
    t = await createTestApp();
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini', { ...NO_CAPS, dailyUsd: 1 });
    await owner
      .patch('/api/settings')
      .send({
        // Input $1 per million tokens, output free.
        modelPrices: [
          { model: 'gpt-4.1-mini', inputPerMTok: 1, outputPerMTok: 0 },
        ],
        outputLimits: { chat: 100 },
        telegramBotToken: TOKEN,
        telegramApiRoot: telegram.url,
      })
      .expect(200);
    await until(
      async () => (await owner.get('/api/telegram/status')).body.status,
      (status) => status === 'connected',
      'the bot to connect',
    );
  });
  afterAll(async () => {
    await t.close();
    await telegram.close();
    await fake.close();
    fake.restoreEnv();
  });

  const toOwner = () =>
    telegram.sent.filter((m) => String(m['chat_id']) === String(OWNER_CHAT));

  it('takes the owner chat as digits or a number, and refuses anything else with 400', async () => {
    const bad = await owner
      .patch('/api/settings')
      .send({ telegramOwnerChatId: 'my chat' })
      .expect(400);
    expect(JSON.stringify(bad.body.message)).toContain(
      'Your Telegram chat id must be a Telegram chat id',
    );
    expect(
      (await owner.get('/api/settings').expect(200)).body.telegramOwnerChatId,
    ).toBeNull();
    const set = await owner
      .patch('/api/settings')
      .send({ telegramOwnerChatId: OWNER_CHAT })
      .expect(200);
    expect(set.body.telegramOwnerChatId).toBe(String(OWNER_CHAT));
  });

  it('sends the 80% notice there once per cap and day', async () => {
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    // $0.85 of $1.00.
    fake.openai.enqueue({
      text: ['one'],
      usage: { promptTokens: 850_000, completionTokens: 1 },
    });
    await client.send(chat.id, 'one');
    await telegram.waitFor(() => toOwner().length > 0, 10_000);
    expect(toOwner()[0]['text']).toBe(
      "Metatron budget: Today's budget is at 85%: $0.85 of $1.00.",
    );
    // More spend under 100%: nothing more.
    fake.openai.enqueue({
      text: ['two'],
      usage: { promptTokens: 10_000, completionTokens: 1 },
    });
    await client.send(chat.id, 'two');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(toOwner()).toHaveLength(1);
  });
});
