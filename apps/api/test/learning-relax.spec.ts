import type TestAgent from 'supertest/lib/agent';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { ToolTurn } from '../src/actions/tool-turn';
import { FlashcardRecord } from '../src/learning/flashcard.schema';
import { VoiceCallsService } from '../src/voice/voice-calls.service';
import {
  startFakeRealtimeServer,
  type FakeRealtimeServer,
} from '../../../tools/fake-realtime/fake-realtime-server';
import { OPENAI_TEST_KEY } from './support/llm-test-kit';
import {
  createTestApp,
  OWNER_PASSWORD,
  type TestApp,
} from './support/test-app';
import { callTool } from './support/call-tool';

// Seed 003's other modes: learning (flashcards, FSRS) and relax (no tools, calm, slower speech).

const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=rtpmap:111 opus/48000/2',
  '',
].join('\r\n');

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe('learning and relax modes', () => {
  let fake: FakeRealtimeServer;
  let t: TestApp;
  let owner: TestAgent;
  let cards: Model<FlashcardRecord>;
  let savedBase: string | undefined;

  beforeAll(async () => {
    fake = await startFakeRealtimeServer();
    savedBase = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.baseUrl;
    t = await createTestApp({
      env: { VOICE_SILENCE_SECONDS: '600' },
    });
    owner = await t.owner();
    cards = t.app.get(getModelToken(FlashcardRecord.name));
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

  const call = (name: string, args: unknown) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are read field by field
    callTool<any>(t.app, name, args, {
      turn: new ToolTurn({ runId: null, source: 'chat' }),
    });

  it('registers both modes in plain words; relax has no tools of its own, learning its three', () => {
    const registry = t.app.get(AiToolRegistry);
    const byMode = new Map(
      registry.modeTools().map((m) => [m.mode.name, m] as const),
    );
    expect(byMode.get('learning')?.tools.map((x) => x.name)).toEqual([
      'flashcard_add',
      'flashcard_review',
      'flashcard_grade',
    ]);
    expect(byMode.get('relax')?.tools).toEqual([]);
    expect(byMode.get('learning')?.mode.description).toMatch(/flashcards/);
    expect(byMode.get('relax')?.mode.description).toMatch(/calm/);
    expect(registry.modes().find((m) => m.name === 'relax')?.speechSpeed).toBe(
      0.85,
    );
  });

  it.each([
    ['no front', { back: 'hola' }, /front/],
    [
      'a blank front',
      { front: '   ', back: 'hola' },
      /front must not be empty/,
    ],
    [
      'a front over 1000 characters',
      { front: 'x'.repeat(1001), back: 'y' },
      /longer than 1000/,
    ],
    ['a number as the back', { front: 'hello', back: 7 }, /back/],
    [
      'a deck name over 60 characters',
      { front: 'hello', back: 'hola', deck: 'd'.repeat(61) },
      /deck/,
    ],
  ])('flashcard_add refuses %s and writes nothing', async (_, args, error) => {
    const before = await cards.countDocuments();
    const result = await call('flashcard_add', args);
    expect(result.error).toMatch(error);
    expect(await cards.countDocuments()).toBe(before);
  });

  it('adds cards, quizzes the due ones, and spaces them out by the grade (FSRS)', async () => {
    await cards.deleteMany({});
    const added = await call('flashcard_add', {
      front: 'hello',
      back: 'hola',
      deck: 'Spanish',
    });
    expect(added.added).toMatchObject({
      front: 'hello',
      back: 'hola',
      deck: 'spanish',
      reviews: 0,
    });
    await call('flashcard_add', { front: 'thanks', back: 'gracias' });
    const due = await call('flashcard_review', { deck: 'spanish' });
    expect(due.due.map((c: { front: string }) => c.front)).toEqual(['hello']);
    expect(due.due_count).toBe(1);
    const all = await call('flashcard_review', {});
    expect(all.due_count).toBe(2);

    const cardId = added.added.card_id;
    const good = await call('flashcard_grade', {
      card_id: cardId,
      grade: 'Good',
    });
    const now = t.clock.now().getTime();
    expect(good).toMatchObject({ graded: 'good', reviews: 1 });
    // A new card answered well comes back after its first learning step (ten minutes).
    expect(new Date(good.next_due).getTime() - now).toBe(10 * MINUTE);
    const none = await call('flashcard_review', { deck: 'spanish' });
    expect(none).toMatchObject({
      due: [],
      due_count: 0,
      next_due: good.next_due,
    });

    t.clock.advance(11 * MINUTE);
    expect(
      (await call('flashcard_review', { deck: 'spanish' })).due_count,
    ).toBe(1);
    // Graded "easy" (4, as a number) it moves days ahead; "again" brings it back in minutes.
    const easy = await call('flashcard_grade', { card_id: cardId, grade: 4 });
    const after = t.clock.now().getTime();
    expect(new Date(easy.next_due).getTime() - after).toBeGreaterThanOrEqual(
      DAY,
    );
    t.clock.advance(30 * DAY);
    const again = await call('flashcard_grade', {
      card_id: cardId,
      grade: '1',
    });
    expect(again.graded).toBe('again');
    expect(
      new Date(again.next_due).getTime() - t.clock.now().getTime(),
    ).toBeLessThan(DAY);
    const stored = await cards.findById(cardId).lean();
    expect(stored).toMatchObject({ reps: 3, lapses: 1 });
  });

  it.each([
    [{ card_id: '66f0c0ffee0000000000abcd', grade: 'good' }, /No flashcard/],
    [{ card_id: 'nope', grade: 'good' }, /No flashcard/],
    [{ grade: 'good' }, /card_id/],
    [
      { card_id: '66f0c0ffee0000000000abcd', grade: 'perfect' },
      /grade must be one of/,
    ],
    [{ card_id: '66f0c0ffee0000000000abcd', grade: 5 }, /grade must be one of/],
  ])('flashcard_grade refuses %j', async (args, error) => {
    expect((await call('flashcard_grade', args)).error).toMatch(error);
  });

  it('flashcard_review refuses a bad limit', async () => {
    expect((await call('flashcard_review', { limit: 50 })).error).toMatch(
      /limit must be 1 to 20/,
    );
  });

  it('a call in the relax mode speaks slower with the calm instructions and no domain tools; learning switches back to normal speed', async () => {
    // A fresh session: the FSRS test moved the clock past the last one's expiry.
    owner = t.http();
    await owner
      .post('/api/auth/login')
      .send({ password: OWNER_PASSWORD })
      .expect(200);
    await owner
      .patch('/api/settings')
      .send({ openaiApiKey: OPENAI_TEST_KEY })
      .expect(200);
    const res = await owner
      .post('/api/voice/calls')
      .send({ sdp: OFFER, mode: 'relax' })
      .expect(201);
    const [started] = fake.calls;
    expect(started.session).toMatchObject({
      audio: { output: { voice: 'marin', speed: 0.85 } },
    });
    expect(String(started.session['instructions'])).toContain('## Relax Mode');
    expect(
      (started.session['tools'] as { name: string }[]).map((x) => x.name),
    ).toEqual(['set_mode', 'confirm_action']);

    const control = await fake.control(res.body.callId);
    control.announceFunctionCall({
      callId: 'call_learn',
      name: 'set_mode',
      arguments: { mode: 'learning' },
    });
    const update = await control.waitFor((e) => e['type'] === 'session.update');
    const session = update['session'] as {
      instructions: string;
      tools: { name: string }[];
      audio: { output: { speed: number } };
    };
    expect(session.audio.output.speed).toBe(1);
    expect(session.instructions).not.toContain('## Relax Mode');
    expect(session.tools.map((x) => x.name)).toEqual(
      expect.arrayContaining(['flashcard_review', 'flashcard_grade']),
    );
  });
});
