import WebSocket from 'ws';
import type {
  ChatMessage,
  RelaySocketMessage,
  UsageReport,
} from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import { GeminiRelayService } from '../src/voice/gemini-relay.service';
import { VoiceCallsService } from '../src/voice/voice-calls.service';
import {
  startFakeGeminiLiveServer,
  type FakeGeminiLiveServer,
  type FakeLiveSession,
} from '../../../tools/fake-gemini-live/fake-gemini-live-server';
import { GEMINI_TEST_KEY } from './support/llm-test-kit';
import { CountTool } from './support/count-tool';
import { createTestApp, type TestApp } from './support/test-app';

const LIVE_MODEL = 'gemini-live-2.5-flash-preview';

/** The console's side of the relay socket: what it received, in order. */
interface Console {
  ws: WebSocket;
  messages: RelaySocketMessage[];
  audio: Buffer[];
  closed: Promise<number>;
  waitFor(
    match: (m: RelaySocketMessage) => boolean,
    timeoutMs?: number,
  ): Promise<RelaySocketMessage>;
}

async function until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('voice calls through the Gemini Live relay (fake Gemini, real SDK, relay WebSocket)', () => {
  let fake: FakeGeminiLiveServer;
  let t: TestApp;
  let owner: TestAgent;
  let counter: CountTool;
  let base: { url: string; cookie: string };
  let savedBase: string | undefined;

  beforeAll(async () => {
    fake = await startFakeGeminiLiveServer({ apiKey: GEMINI_TEST_KEY });
    savedBase = process.env['GOOGLE_GEMINI_BASE_URL'];
    process.env['GOOGLE_GEMINI_BASE_URL'] = fake.baseUrl;
    t = await createTestApp({
      providers: [CountTool],
      env: { VOICE_SILENCE_SECONDS: '600' },
    });
    owner = await t.owner();
    base = await t.serve();
    counter = t.app.get(CountTool);
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
    if (savedBase === undefined) delete process.env['GOOGLE_GEMINI_BASE_URL'];
    else process.env['GOOGLE_GEMINI_BASE_URL'] = savedBase;
  });

  afterEach(async () => {
    const live = t.app.get(VoiceCallsService).current();
    if (live) await owner.delete(`/api/voice/calls/${live.callId}`);
    counter.runs = [];
  });

  const setKey = (geminiApiKey: string | null) =>
    owner.patch('/api/settings').send({ geminiApiKey }).expect(200);

  async function liveChat(model = LIVE_MODEL): Promise<string> {
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    await owner.patch(`/api/chats/${chat.id}`).send({ model }).expect(200);
    return chat.id;
  }

  const messages = async (chatId: string): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;

  const chatCount = async (): Promise<number> =>
    (await owner.get('/api/chats').expect(200)).body.length;

  function openConsole(
    path: string,
    headers: Record<string, string> = {
      Cookie: base.cookie,
      Origin: base.url,
    },
  ): Promise<Console> {
    const ws = new WebSocket(`${base.url.replace(/^http/, 'ws')}${path}`, {
      headers,
    });
    const messages: RelaySocketMessage[] = [];
    const audio: Buffer[] = [];
    const listeners = new Set<() => void>();
    ws.on('message', (data, isBinary) => {
      if (isBinary) audio.push(data as Buffer);
      else messages.push(JSON.parse(String(data)) as RelaySocketMessage);
      listeners.forEach((l) => l());
    });
    const closed = new Promise<number>((resolve) =>
      ws.on('close', (code) => resolve(code)),
    );
    return new Promise((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) =>
        reject(new Error(`refused ${res.statusCode}`)),
      );
      ws.on('error', reject);
      ws.on('open', () =>
        resolve({
          ws,
          messages,
          audio,
          closed,
          waitFor: (match, timeoutMs = 15_000) =>
            new Promise((ok, fail) => {
              const check = () => {
                const found = messages.find(match);
                if (!found) return;
                clearTimeout(timer);
                listeners.delete(check);
                ok(found);
              };
              const timer = setTimeout(() => {
                listeners.delete(check);
                fail(new Error('timed out waiting for a relay message'));
              }, timeoutMs);
              listeners.add(check);
              check();
            }),
        }),
      );
    });
  }

  it('without a Gemini key answers 409 in words and opens no session', async () => {
    await setKey(GEMINI_TEST_KEY);
    const chatId = await liveChat();
    await setKey(null);
    const sessions = fake.sessions.length;
    const res = await owner
      .post('/api/voice/relay-calls')
      .send({ chatId })
      .expect(409);
    expect(res.body.message).toMatch(/No Gemini API key is set/);
    expect(fake.sessions).toHaveLength(sessions);
  });

  it('lets the chat model decide the provider: 409 pointing at the other route', async () => {
    await setKey(GEMINI_TEST_KEY);
    const typed = await liveChat('gemini-2.5-flash');
    const relay = await owner
      .post('/api/voice/relay-calls')
      .send({ chatId: typed })
      .expect(409);
    expect(relay.body.message).toMatch(
      /gemini-2\.5-flash\) does not speak through Gemini Live.*POST \/api\/voice\/calls/,
    );
    const live = await liveChat();
    const rtc = await owner
      .post('/api/voice/calls')
      .send({ sdp: 'v=0\r\n', chatId: live })
      .expect(409);
    expect(rtc.body.message).toMatch(/relay-calls/);
    expect(
      (await owner.get(`/api/voice/provider?chatId=${live}`).expect(200)).body,
    ).toEqual({ provider: 'gemini', model: LIVE_MODEL });
    expect(
      (await owner.get(`/api/voice/provider?chatId=${typed}`).expect(200)).body,
    ).toEqual({ provider: 'openai', model: 'gemini-2.5-flash' });
    await owner
      .get('/api/voice/provider?chatId=66f0c0ffee0000000000abcd')
      .expect(400);
  });

  it.each([
    ['an unknown chat', { chatId: '66f0c0ffee0000000000abcd' }, 400],
    ['a chat id of the wrong type', { chatId: 7 }, 400],
    ['a null chat id', { chatId: null }, 400],
    ['an unknown mode', { mode: 'karaoke' }, 400],
    ['an unknown field', { key: 'x' }, 400],
  ])('refuses %s and opens nothing', async (_, body, status) => {
    await setKey(GEMINI_TEST_KEY);
    const sessions = fake.sessions.length;
    const before = await chatCount();
    await owner.post('/api/voice/relay-calls').send(body).expect(status);
    expect(fake.sessions).toHaveLength(sessions);
    expect(await chatCount()).toBe(before);
  });

  it('says in words, without the key, when Gemini refuses the key; leaves no chat', async () => {
    await setKey('AIza-wrong-key-000000000009999');
    await owner
      .patch('/api/settings')
      .send({ primaryModel: LIVE_MODEL })
      .expect(200);
    try {
      const before = await chatCount();
      const res = await owner
        .post('/api/voice/relay-calls')
        .send({})
        .expect(502);
      expect(res.body.message).toMatch(/Gemini closed the live session \(1007/);
      expect(JSON.stringify(res.body)).not.toContain('9999');
      expect(await chatCount()).toBe(before);
      expect(t.app.get(VoiceCallsService).current()).toBeNull();
    } finally {
      await setKey(GEMINI_TEST_KEY);
      await owner.patch('/api/settings').send({ primaryModel: null });
    }
  });

  it('refuses the audio socket without the session, from another origin, or for no call', async () => {
    await setKey(GEMINI_TEST_KEY);
    const chatId = await liveChat();
    const { callId, socketPath } = (
      await owner.post('/api/voice/relay-calls').send({ chatId }).expect(201)
    ).body;
    await fake.nextSession();
    await expect(openConsole(socketPath, { Origin: base.url })).rejects.toThrow(
      'refused 401',
    );
    await expect(
      openConsole(socketPath, {
        Cookie: base.cookie,
        Origin: 'http://127.0.0.1:1',
      }),
    ).rejects.toThrow('refused 403');
    await expect(
      openConsole(socketPath, {
        Cookie: 'metatron_session=forged',
        Origin: base.url,
      }),
    ).rejects.toThrow('refused 401');
    await expect(openConsole('/api/voice/relay/gemini_nobody')).rejects.toThrow(
      'refused 404',
    );
    // The call is still there for its own console.
    const browser = await openConsole(socketPath);
    await browser.waitFor((m) => m.type === 'ready');
    await owner.delete(`/api/voice/calls/${callId}`).expect(204);
  });

  it('runs a whole call: audio both ways, a tool once on the server, a mode switch and a GoAway bridged by resumption, words and usage kept, hang-up', async () => {
    await setKey(GEMINI_TEST_KEY);
    const chatId = await liveChat();
    const usageBefore = await voiceUsage();
    const start = await owner
      .post('/api/voice/relay-calls')
      .send({ chatId })
      .expect(201);
    expect(start.body).toEqual({
      callId: expect.stringMatching(/^gemini_/),
      chatId,
      provider: 'gemini',
      model: LIVE_MODEL,
      socketPath: `/api/voice/relay/${start.body.callId}`,
      inputSampleRate: 16000,
      outputSampleRate: 24000,
    });
    expect(JSON.stringify(start.body)).not.toContain(GEMINI_TEST_KEY);
    const { callId } = start.body;
    expect(t.app.get(VoiceCallsService).current()?.callId).toBe(callId);
    // A second call while this one is live is refused, naming it.
    const second = await owner
      .post('/api/voice/relay-calls')
      .send({ chatId })
      .expect(409);
    expect(second.body.message).toContain(callId);

    const first = await fake.nextSession();
    expect(first.apiKey).toBe(GEMINI_TEST_KEY);
    expect(first.setup).toMatchObject({
      model: `models/${LIVE_MODEL}`,
      generationConfig: { responseModalities: ['AUDIO'] },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      sessionResumption: {},
    });
    expect(first.toolNames()).toContain('set_mode');
    expect(first.toolNames()).not.toContain('count_runs');

    const browser = await openConsole(start.body.socketPath);
    await browser.waitFor((m) => m.type === 'ready');

    // The microphone streams 20 ms frames (640 bytes of PCM16 at 16 kHz) all through the call.
    let sent = 0;
    const mic = setInterval(() => {
      if (browser.ws.readyState !== browser.ws.OPEN) return;
      browser.ws.send(Buffer.alloc(640, sent % 251));
      sent += 640;
    }, 20);
    try {
      await first.waitForAudio(6_400);
      const audioIn = first.received.find((m) => m['realtimeInput']) as {
        realtimeInput: { audio: { mimeType: string } };
      };
      expect(audioIn.realtimeInput.audio.mimeType).toBe('audio/pcm;rate=16000');

      // Bad input on both sides is ignored; the call goes on.
      browser.ws.send('not json');
      browser.ws.send(Buffer.alloc(3));
      first.send({ serverContent: { modelTurn: { parts: 'nope' } } });
      first.send({ toolCall: { functionCalls: [{ name: 5 }] } });
      first.send({ somethingNew: { x: 1 } });
      first.sendRaw('{not json');

      // The owner asks for the data mode; Gemini calls set_mode.
      first.send({
        serverContent: { inputTranscription: { text: 'Switch to ' } },
      });
      first.send({
        serverContent: { inputTranscription: { text: 'data mode.' } },
      });
      first.send({
        toolCall: {
          functionCalls: [
            { id: 'fc-mode', name: 'set_mode', args: { mode: 'data' } },
          ],
        },
      });
      const modeAnswer = (await first.waitFor((m) => !!m['toolResponse'])) as {
        toolResponse: {
          functionResponses: Array<{ id: string; name: string }>;
        };
      };
      expect(modeAnswer.toolResponse.functionResponses).toEqual([
        expect.objectContaining({ id: 'fc-mode', name: 'set_mode' }),
      ]);
      await browser.waitFor((m) => m.type === 'mode' && m.mode === 'data');

      // Gemini answers aloud; its audio reaches the console as it was sent.
      const spoken = Buffer.alloc(4_800, 7);
      first.send({
        serverContent: { outputTranscription: { text: 'Data mode ' } },
      });
      first.sendAudio(spoken);
      first.send({
        serverContent: { outputTranscription: { text: 'is on.' } },
      });
      first.send({
        usageMetadata: {
          promptTokenCount: 120,
          responseTokenCount: 30,
          totalTokenCount: 150,
        },
      });
      first.send({ serverContent: { turnComplete: true } });
      await until(() => Buffer.concat(browser.audio).equals(spoken));

      // At rest with a resumable handle, the session moves to a connection with the data mode's tools.
      const handle = first.sendResumable();
      const secondSession = await fake.nextSession();
      expect(secondSession.resumedFrom).toBe(handle);
      expect(secondSession.toolNames()).toContain('count_runs');
      expect(
        String(JSON.stringify(secondSession.setup['systemInstruction'])),
      ).toContain('count_runs');
      const moved = await browser.waitFor((m) => m.type === 'reconnected');
      expect(moved).toMatchObject({ reason: 'tools' });
      const gap = t.app.get(GeminiRelayService).lastReconnect;
      expect(gap?.resumed).toBe(true);
      expect(gap?.gapMs).toBeLessThan(1_000);
      await until(() => first.closed);
      await secondSession.waitForAudio(3_200);

      // A tool of the new mode, announced twice, runs once on the server.
      secondSession.send({
        serverContent: { inputTranscription: { text: 'Count one.' } },
      });
      const countCall = {
        toolCall: {
          functionCalls: [
            { id: 'fc-count', name: 'count_runs', args: { label: 'one' } },
          ],
        },
      };
      secondSession.send(countCall);
      secondSession.send(countCall);
      const countAnswer = (await secondSession.waitFor(
        (m) => !!m['toolResponse'],
      )) as {
        toolResponse: {
          functionResponses: Array<{ id: string; response: object }>;
        };
      };
      expect(countAnswer.toolResponse.functionResponses).toEqual([
        {
          id: 'fc-count',
          name: 'count_runs',
          response: { counted: 'one', total: 1 },
        },
      ]);
      await browser.waitFor(
        (m) => m.type === 'tool' && m.name === 'count_runs',
      );
      secondSession.send({
        serverContent: { outputTranscription: { text: 'Counted.' } },
      });
      secondSession.send({
        usageMetadata: {
          promptTokenCount: 200,
          responseTokenCount: 10,
          totalTokenCount: 210,
        },
      });
      secondSession.send({ serverContent: { turnComplete: true } });
      await new Promise((r) => setTimeout(r, 100));
      expect(counter.runs).toEqual(['one']);

      // Gemini's connection limit: GoAway is bridged the same way, tools unchanged.
      const handle2 = secondSession.sendResumable();
      secondSession.send({ goAway: { timeLeft: '10s' } });
      const third = await fake.nextSession();
      expect(third.resumedFrom).toBe(handle2);
      expect(third.toolNames()).toContain('count_runs');
      await browser.waitFor(
        (m) => m.type === 'reconnected' && m.reason === 'goaway',
      );
      await third.waitForAudio(3_200);

      // The microphone lost nothing across both moves.
      clearInterval(mic);
      const delivered = () =>
        [first, secondSession, third].reduce(
          (sum, s: FakeLiveSession) => sum + s.audioBytes,
          0,
        );
      // Frames still on their way arrive when they arrive (not within a fixed 200 ms); a lost one never does.
      await until(() => delivered() >= sent).catch(() => undefined);
      expect(delivered()).toBe(sent);

      // Hang-up: the console is told, the Gemini session closed, the call gone.
      await owner.delete(`/api/voice/calls/${callId}`).expect(204);
      await browser.waitFor((m) => m.type === 'ended');
      expect(await browser.closed).toBe(1000);
      await until(() => third.closed);
      expect(t.app.get(VoiceCallsService).current()).toBeNull();
    } finally {
      clearInterval(mic);
    }

    const stored = await messages(chatId);
    const said = stored.map((m) => ({
      role: m.role,
      text: m.content,
      tools: (m.parts ?? [])
        .filter((p) => p.type === 'tool_call')
        .map((p) => (p as { name: string }).name),
    }));
    expect(said).toEqual([
      { role: 'user', text: 'Switch to data mode.', tools: [] },
      { role: 'assistant', text: 'Data mode is on.', tools: ['set_mode'] },
      { role: 'user', text: 'Count one.', tools: [] },
      { role: 'assistant', text: 'Counted.', tools: ['count_runs'] },
    ]);
    const usage = await voiceUsage();
    expect(usage.inputTokens - usageBefore.inputTokens).toBe(320);
    expect(usage.outputTokens - usageBefore.outputTokens).toBe(40);
  });

  it('ends the call when the console leaves, and when Gemini drops the session', async () => {
    await setKey(GEMINI_TEST_KEY);
    const chatId = await liveChat();
    const one = (
      await owner.post('/api/voice/relay-calls').send({ chatId }).expect(201)
    ).body;
    const s1 = await fake.nextSession();
    const c1 = await openConsole(one.socketPath);
    await c1.waitFor((m) => m.type === 'ready');
    c1.ws.close();
    await until(() => s1.closed);
    expect(t.app.get(VoiceCallsService).current()).toBeNull();

    const two = (
      await owner.post('/api/voice/relay-calls').send({ chatId }).expect(201)
    ).body;
    const s2 = await fake.nextSession();
    const c2 = await openConsole(two.socketPath);
    await c2.waitFor((m) => m.type === 'ready');
    s2.close(1011, 'internal');
    const ended = await c2.waitFor((m) => m.type === 'ended');
    expect(ended).toMatchObject({
      reason: expect.stringMatching(/Gemini closed/),
    });
    expect(t.app.get(VoiceCallsService).current()).toBeNull();
  });

  it('ends a relay call when the API stops: the console is told, the Gemini session closed, the words kept', async () => {
    await setKey(GEMINI_TEST_KEY);
    const chatId = await liveChat();
    const call = (
      await owner.post('/api/voice/relay-calls').send({ chatId }).expect(201)
    ).body;
    const session = await fake.nextSession();
    const browser = await openConsole(call.socketPath);
    await browser.waitFor((m) => m.type === 'ready');
    session.send({
      serverContent: { inputTranscription: { text: 'Before the stop.' } },
    });
    const tool = {
      toolCall: {
        functionCalls: [
          { id: 'fc-stop', name: 'set_mode', args: { mode: 'data' } },
        ],
      },
    };
    session.send(tool);
    await session.waitFor((m) => !!m['toolResponse']);
    await t.app.get(VoiceCallsService).beforeApplicationShutdown();
    await browser.waitFor(
      (m) => m.type === 'ended' && /server is stopping/.test(m.reason),
    );
    await until(() => session.closed);
    expect(t.app.get(VoiceCallsService).current()).toBeNull();
    const stored = await messages(chatId);
    expect(stored.map((m) => m.content)).toEqual(['Before the stop.', '']);
    expect(stored[1].parts?.some((p) => p.type === 'tool_call')).toBe(true);
  });

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
});
