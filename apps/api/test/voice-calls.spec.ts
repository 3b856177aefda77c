import type { ChatMessage, UsageReport } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import { VoiceCallsService } from '../src/voice/voice-calls.service';
import {
  startFakeRealtimeServer,
  type FakeControl,
  type FakeRealtimeServer,
} from '../../../tools/fake-realtime/fake-realtime-server';
import { makeCaller } from '../../../tools/fake-realtime/fake-peer';
import { OPENAI_TEST_KEY } from './support/llm-test-kit';
import { CountTool } from './support/count-tool';
import { createTestApp, type TestApp } from './support/test-app';

/** A browser-like SDP offer; the fake provider answers it with a canned answer. */
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

async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('voice calls (OpenAI Realtime GA, through the fake provider)', () => {
  let fake: FakeRealtimeServer;
  let t: TestApp;
  let owner: TestAgent;
  let counter: CountTool;
  let savedBase: string | undefined;

  beforeAll(async () => {
    fake = await startFakeRealtimeServer();
    savedBase = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.baseUrl;
    t = await createTestApp({
      providers: [CountTool],
      env: { VOICE_SILENCE_SECONDS: '600' },
    });
    owner = await t.owner();
    counter = t.app.get(CountTool);
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
    counter.runs = [];
  });

  const setKey = (openaiApiKey: string | null) =>
    owner.patch('/api/settings').send({ openaiApiKey }).expect(200);

  const messages = async (chatId: string): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;

  const chatCount = async (): Promise<number> =>
    (await owner.get('/api/chats').expect(200)).body.length;

  async function voiceUsage(): Promise<{
    inputTokens: number;
    outputTokens: number;
  }> {
    const report: UsageReport = (await owner.get('/api/usage').expect(200))
      .body;
    const row = report.bySource.find((r) => r.source === 'voice');
    return {
      inputTokens: row?.inputTokens ?? 0,
      outputTokens: row?.outputTokens ?? 0,
    };
  }

  async function startCall(
    body: object = { sdp: OFFER },
  ): Promise<{ callId: string; chatId: string; control: FakeControl }> {
    const res = await owner.post('/api/voice/calls').send(body).expect(201);
    const control = await fake.control(res.body.callId);
    return { callId: res.body.callId, chatId: res.body.chatId, control };
  }

  it('without an OpenAI key answers 409 saying so, and calls nobody', async () => {
    await setKey(null);
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(409);
    expect(res.body.message).toMatch(/No OpenAI API key/);
    expect(fake.calls).toHaveLength(0);
  });

  it.each([
    ['missing', {}, /sdp must be the SDP offer/],
    ['not a string', { sdp: 42 }, /sdp must be the SDP offer/],
    ['a list', { sdp: [OFFER] }, /sdp must be the SDP offer/],
    ['empty', { sdp: '   ' }, /sdp must not be empty/],
    [
      'over 64 KiB (in bytes)',
      { sdp: OFFER + 'a=x:' + 'é'.repeat(33_000) },
      /longer than 64 KiB/,
    ],
    ['not SDP', { sdp: 'hello' }, /SDP offer/],
    [
      'an unknown chat',
      { sdp: OFFER, chatId: '66f0c0ffee0000000000abcd' },
      /Chat '66f0c0ffee0000000000abcd' not found/,
    ],
    ['a malformed chat id', { sdp: OFFER, chatId: '../x' }, /not found/],
    [
      'a chat id of the wrong type',
      { sdp: OFFER, chatId: 7 },
      /Chat id must be a string/,
    ],
    ['an unknown mode', { sdp: OFFER, mode: 'karaoke' }, /mode must be one of/],
    [
      'a null chat id',
      { sdp: OFFER, chatId: null },
      /Chat id must not be null/,
    ],
    ['an unknown field', { sdp: OFFER, key: 'sk-x' }, /key should not exist/],
    ['a mode of the wrong type', { sdp: OFFER, mode: 3 }, /mode must be/],
  ])(
    'refuses an offer with %s (400) and sends nothing',
    async (_, body, message) => {
      await setKey(OPENAI_TEST_KEY);
      const before = await chatCount();
      const res = await owner.post('/api/voice/calls').send(body).expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(message);
      expect(fake.calls).toHaveLength(0);
      expect(await chatCount()).toBe(before);
    },
  );

  it('starts a call with the key on the server and the GA session of the chat and mode, in a new chat', async () => {
    await setKey(OPENAI_TEST_KEY);
    const before = await chatCount();
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER, mode: 'data' })
      .expect(201);
    expect(res.body).toEqual({
      sdp: expect.stringMatching(/^v=0/),
      callId: expect.stringMatching(/^rtc_/),
      chatId: expect.stringMatching(/^[0-9a-f]{24}$/),
    });
    expect(JSON.stringify(res.body)).not.toContain(OPENAI_TEST_KEY);
    const [call] = fake.calls;
    expect(call.apiKey).toBe(OPENAI_TEST_KEY);
    expect(call.sdp).toBe(OFFER);
    expect(call.session).toMatchObject({
      type: 'realtime',
      model: 'gpt-realtime',
      audio: {
        input: {
          transcription: { model: expect.any(String) },
          turn_detection: { type: 'server_vad' },
        },
        output: { voice: 'marin' },
      },
    });
    const tools = (call.session['tools'] as { name: string }[]).map(
      (x) => x.name,
    );
    expect(tools).toEqual(
      expect.arrayContaining(['set_mode', 'db_query', 'count_runs']),
    );
    expect(tools).not.toContain('save_memory');
    expect(String(call.session['instructions'])).toContain('count_runs');
    await fake.control(res.body.callId);
    expect(await chatCount()).toBe(before + 1);
    const chat = (await owner.get('/api/chats').expect(200)).body.find(
      (c: { id: string }) => c.id === res.body.chatId,
    );
    expect(chat).toBeDefined();
    expect(chat.mode).toBe('data');
  });

  it('talks in an existing chat when chatId is given', async () => {
    await setKey(OPENAI_TEST_KEY);
    const created = (await owner.post('/api/chats').send({}).expect(201)).body;
    const before = await chatCount();
    const { chatId } = await startCall({ sdp: OFFER, chatId: created.id });
    expect(chatId).toBe(created.id);
    expect(await chatCount()).toBe(before);
  });

  it('uses the realtimeModel and realtimeVoice settings, and refuses bad ones', async () => {
    await setKey(OPENAI_TEST_KEY);
    await owner
      .patch('/api/settings')
      .send({ realtimeModel: 'no spaces allowed' })
      .expect(400);
    await owner
      .patch('/api/settings')
      .send({ realtimeVoice: 'x y' })
      .expect(400);
    await owner
      .patch('/api/settings')
      .send({ realtimeModel: 'gpt-realtime-mini', realtimeVoice: 'cedar' })
      .expect(200);
    try {
      await startCall();
      expect(fake.calls[0].session).toMatchObject({
        model: 'gpt-realtime-mini',
        audio: { output: { voice: 'cedar' } },
      });
    } finally {
      await owner
        .patch('/api/settings')
        .send({ realtimeModel: null, realtimeVoice: null })
        .expect(200);
    }
  });

  it('allows one live call: a second gets 409 naming the live one', async () => {
    await setKey(OPENAI_TEST_KEY);
    const first = await startCall();
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(409);
    expect(res.body.message).toContain(first.callId);
    expect(fake.calls).toHaveLength(1);
    expect((await owner.get('/api/voice/calls/current')).body.call).toEqual({
      callId: first.callId,
      chatId: first.chatId,
      startedAt: expect.any(String),
    });
  });

  it('lets only one of two simultaneous offers through', async () => {
    await setKey(OPENAI_TEST_KEY);
    fake.answerDelayMs = 200;
    const [a, b] = await Promise.all([
      owner.post('/api/voice/calls').send({ sdp: OFFER }),
      owner.post('/api/voice/calls').send({ sdp: OFFER }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect(fake.calls).toHaveLength(1);
  });

  it.each([
    [
      401,
      { error: { message: `Incorrect API key provided: ${OPENAI_TEST_KEY}` } },
      /refused the API key/,
    ],
    [
      400,
      { error: { message: "The model 'gpt-nope' does not exist" } },
      /refused the speaking model/,
    ],
  ])(
    'answers a provider refusal (%s) in plain words, never with the key, and leaves no chat',
    async (status, body, message) => {
      await setKey(OPENAI_TEST_KEY);
      const before = await chatCount();
      fake.refuse(status, body);
      const res = await owner
        .post('/api/voice/calls')
        .send({ sdp: OFFER })
        .expect(502);
      expect(res.body.message).toMatch(message);
      expect(JSON.stringify(res.body)).not.toContain(OPENAI_TEST_KEY);
      expect(JSON.stringify(res.body)).not.toMatch(/sk-/);
      expect(await chatCount()).toBe(before);
      expect(t.app.get(VoiceCallsService).current()).toBeNull();
    },
  );

  it('runs a function call announced in three events once, answers it, then asks for a response', async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control } = await startCall({ sdp: OFFER, mode: 'data' });
    control.announceFunctionCall({
      callId: 'call_1',
      name: 'count_runs',
      arguments: { label: 'once' },
    });
    const output = await control.waitFor(
      (e) => e['type'] === 'conversation.item.create',
    );
    expect(output).toEqual({
      type: 'conversation.item.create',
      item: {
        type: 'function_call_output',
        call_id: 'call_1',
        output: JSON.stringify({ counted: 'once', total: 1 }),
      },
    });
    await control.waitFor((e) => e['type'] === 'response.create');
    await new Promise((r) => setTimeout(r, 200));
    expect(counter.runs).toEqual(['once']);
    const types = control.received.map((e) => e['type']);
    expect(types.filter((x) => x === 'conversation.item.create')).toHaveLength(
      1,
    );
    expect(types.filter((x) => x === 'response.create')).toHaveLength(1);
    expect(types).not.toContain('session.update');
  });

  it('refuses a tool the owner disabled, through the same registry as typed chats', async () => {
    await setKey(OPENAI_TEST_KEY);
    await owner
      .patch('/api/settings')
      .send({ disabledTools: ['count_runs'] })
      .expect(200);
    try {
      const { control } = await startCall({ sdp: OFFER, mode: 'data' });
      expect(
        (fake.calls[0].session['tools'] as { name: string }[]).map(
          (x) => x.name,
        ),
      ).not.toContain('count_runs');
      control.announceFunctionCall({
        callId: 'call_off',
        name: 'count_runs',
        arguments: { label: 'x' },
      });
      const output = await control.waitFor(
        (e) => e['type'] === 'conversation.item.create',
      );
      expect(
        JSON.parse((output['item'] as { output: string }).output),
      ).toHaveProperty('error');
      expect(counter.runs).toEqual([]);
    } finally {
      await owner
        .patch('/api/settings')
        .send({ disabledTools: [] })
        .expect(200);
    }
  });

  it('after set_mode sends the new tools and prompt (GA shape) before response.create', async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control, chatId } = await startCall();
    control.announceFunctionCall({
      callId: 'call_mode',
      name: 'set_mode',
      arguments: { mode: 'data' },
    });
    await control.waitFor((e) => e['type'] === 'response.create');
    const sent = control.received;
    expect(sent.map((e) => e['type'])).toEqual([
      'conversation.item.create',
      'session.update',
      'response.create',
    ]);
    const update = sent[1]['session'] as {
      type: string;
      tools: { name: string }[];
      instructions: string;
    };
    expect(update.type).toBe('realtime');
    expect(update.tools.map((x) => x.name)).toContain('count_runs');
    expect(update.instructions).toContain('count_runs');
    const chat = (await owner.get('/api/chats').expect(200)).body.find(
      (c: { id: string }) => c.id === chatId,
    );
    expect(chat.mode).toBe('data');
  });

  it("switches mode for another mode's tool, as typed chats do", async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control } = await startCall();
    control.announceFunctionCall({
      callId: 'call_else',
      name: 'count_runs',
      arguments: { label: 'elsewhere' },
    });
    await control.waitFor((e) => e['type'] === 'response.create');
    expect(counter.runs).toEqual(['elsewhere']);
    expect(control.received.map((e) => e['type'])).toEqual([
      'conversation.item.create',
      'session.update',
      'response.create',
    ]);
  });

  it('keeps the words in spoken order with the tool call as a part, and counts usage once per response', async () => {
    await setKey(OPENAI_TEST_KEY);
    const usageBefore = await voiceUsage();
    const { control, chatId } = await startCall({ sdp: OFFER, mode: 'data' });
    control.send({
      type: 'input_audio_buffer.speech_started',
      item_id: 'item_u1',
    });
    // The transcript of the owner's words comes after Metatron answered them.
    control.announceFunctionCall({
      callId: 'call_t',
      name: 'count_runs',
      arguments: { label: 'spoken' },
      responseId: 'resp_1',
    });
    await control.waitFor((e) => e['type'] === 'response.create');
    control.send({ type: 'response.created', response: { id: 'resp_2' } });
    control.send({
      type: 'response.output_audio_transcript.done',
      response_id: 'resp_2',
      item_id: 'item_a1',
      transcript: 'Counted it.',
    });
    const done = {
      type: 'response.done',
      response: {
        id: 'resp_2',
        output: [],
        usage: { input_tokens: 100, output_tokens: 50, total_tokens: 150 },
      },
    };
    control.send(done);
    control.send(done);
    control.send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: 'item_u1',
      transcript: 'Count one for me.',
    });
    const stored = await until(
      () => messages(chatId),
      (list) =>
        list.some((m) => m.role === 'user') &&
        list.some((m) => m.content.includes('Counted it.')),
    );
    // The owner's switch to the data mode at the start is kept as a small event of its own.
    expect(stored[0].parts).toEqual([
      { type: 'mode', mode: 'data', by: 'owner' },
    ]);
    stored.shift();
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[0].content).toBe('Count one for me.');
    expect(stored[1].content).toBe('Counted it.');
    expect(stored[1].parts).toEqual([
      expect.objectContaining({
        type: 'tool_call',
        id: 'call_t',
        name: 'count_runs',
        arguments: { label: 'spoken' },
        result: JSON.stringify({ counted: 'spoken', total: 1 }),
      }),
      { type: 'text', text: 'Counted it.' },
    ]);
    // resp_1 (20 in / 10 out, the fake's function-call response) + resp_2 once (100 / 50).
    const after = await until(
      () => voiceUsage(),
      (row) => row.inputTokens >= usageBefore.inputTokens + 120,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(await voiceUsage()).toEqual({
      inputTokens: usageBefore.inputTokens + 120,
      outputTokens: usageBefore.outputTokens + 60,
    });
    expect(after.inputTokens).toBe(usageBefore.inputTokens + 120);
  });

  it('logs and ignores malformed and unknown events, and stays up', async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control } = await startCall({ sdp: OFFER, mode: 'data' });
    control.send({ type: 'something.new', anything: [1, 2] });
    control.send({ type: 'response.output_item.done', item: 'not an object' });
    control.send({
      type: 'response.done',
      response: { output: 'nope', usage: 'x' },
    });
    control.send({ type: 'response.function_call_arguments.done', call_id: 5 });
    control.send({ no: 'type' });
    control.announceFunctionCall({
      callId: 'call_bad_args',
      name: 'count_runs',
      arguments: '{not json',
    });
    const output = await control.waitFor(
      (e) => e['type'] === 'conversation.item.create',
    );
    expect((output['item'] as { output: string }).output).toMatch(/error/);
    expect(counter.runs).toEqual([]);
    expect(t.app.get(VoiceCallsService).current()).not.toBeNull();
  });

  it('hangs up: the provider hang-up, the control channel closed, the place free again', async () => {
    await setKey(OPENAI_TEST_KEY);
    const { callId, control } = await startCall();
    await owner.delete('/api/voice/calls/rtc_unknown').expect(404);
    await owner.delete(`/api/voice/calls/${callId}`).expect(204);
    expect(fake.calls[0].hungUp).toBe(true);
    expect(
      await until(
        async () => control.closed,
        (closed) => closed,
      ),
    ).toBe(true);
    expect((await owner.get('/api/voice/calls/current')).body.call).toBeNull();
    await owner.delete(`/api/voice/calls/${callId}`).expect(404);
    await startCall();
  });

  it("keeps the chat's versions still while a call is live: regenerate and switch wait for the hang-up", async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control, callId, chatId } = await startCall();
    control.send({ type: 'response.created', response: { id: 'resp_v' } });
    control.send({
      type: 'response.output_audio_transcript.done',
      response_id: 'resp_v',
      item_id: 'item_v',
      transcript: 'Hello there.',
    });
    control.send({
      type: 'response.done',
      response: {
        id: 'resp_v',
        output: [],
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      },
    });
    const stored = await until(
      () => messages(chatId),
      (list) => list.some((m) => m.content === 'Hello there.'),
    );
    const reply = stored.find((m) => m.content === 'Hello there.');
    for (const path of ['regenerate', 'versions/1']) {
      const res = await owner
        .post(`/api/chats/${chatId}/messages/${reply?.id}/${path}`)
        .send({})
        .expect(409);
      expect(res.body.message).toMatch(/voice call is live/);
    }
    await owner.delete(`/api/voice/calls/${callId}`).expect(204);
    await owner
      .post(`/api/chats/${chatId}/messages/${reply?.id}/versions/1`)
      .expect(200);
  });

  it('ends the call when the control channel drops', async () => {
    await setKey(OPENAI_TEST_KEY);
    const { control } = await startCall();
    control.drop();
    const live = await until(
      async () => t.app.get(VoiceCallsService).current(),
      (c) => c === null,
    );
    expect(live).toBeNull();
    expect(fake.calls[0].hungUp).toBe(true);
  });

  it('connects a real WebRTC peer through the API: the provider answers the offer and its audio arrives', async () => {
    await setKey(OPENAI_TEST_KEY);
    const caller = await makeCaller();
    try {
      const res = await owner
        .post('/api/voice/calls')
        .send({ sdp: caller.offer })
        .expect(201);
      await caller.connect(res.body.sdp);
      const heard = await until(
        async () => caller.audioPacketsReceived,
        (n) => n >= 5,
      );
      expect(heard).toBeGreaterThanOrEqual(5);
    } finally {
      caller.close();
    }
  });
});

describe('voice call limits', () => {
  let fake: FakeRealtimeServer;
  let t: TestApp;
  let owner: TestAgent;
  let savedBase: string | undefined;

  beforeAll(async () => {
    fake = await startFakeRealtimeServer();
    savedBase = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.baseUrl;
    t = await createTestApp({ env: { VOICE_SILENCE_SECONDS: '1' } });
    owner = await t.owner();
    await owner
      .patch('/api/settings')
      .send({ openaiApiKey: OPENAI_TEST_KEY })
      .expect(200);
  });

  afterAll(async () => {
    await fake.close();
    if (savedBase === undefined) delete process.env['OPENAI_BASE_URL'];
    else process.env['OPENAI_BASE_URL'] = savedBase;
  });

  it('ends a call nobody speaks in, and keeps one where words come', async () => {
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(201);
    const control = await fake.control(res.body.callId);
    // Words every 250 ms for 1.5 s, past the 1 s limit: each gap leaves 750 ms for a busy
    // machine's late timers and messages before the limit could end the call.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 250));
      control.send({
        type: 'input_audio_buffer.speech_started',
        item_id: `i${i}`,
      });
    }
    expect(t.app.get(VoiceCallsService).current()?.callId).toBe(
      res.body.callId,
    );
    // Then silence: the call ends on its own (waited for, not slept on).
    const wordsEnded = Date.now();
    const current = await until(
      async () => t.app.get(VoiceCallsService).current(),
      (call) => call === null,
    );
    expect(current).toBeNull();
    expect(Date.now() - wordsEnded).toBeGreaterThanOrEqual(900);
    expect(
      await until(
        async () => fake.calls[0].hungUp,
        (hungUp) => hungUp,
      ),
    ).toBe(true);
  });

  it('stopping the API hangs up the live call, with its words stored', async () => {
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER })
      .expect(201);
    const control = await fake.control(res.body.callId);
    control.send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: 'x1',
      transcript: 'Before the stop.',
    });
    await until(
      async () =>
        (await owner.get(`/api/chats/${res.body.chatId}/messages`).expect(200))
          .body as ChatMessage[],
      (list) => list.length > 0,
    );
    const call = fake.calls.find((c) => c.callId === res.body.callId);
    await t.close();
    expect(call?.hungUp).toBe(true);
    expect(
      await until(
        async () => control.closed,
        (closed) => closed,
      ),
    ).toBe(true);
  });
});
