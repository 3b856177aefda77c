import type { ChatSummary } from '@metatronos/shared-types';
import {
  existsSync,
  readFileSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** 10 February next year (sessions made then are still valid for the HTTP client), 08:05 UTC = 09:05 in Berlin. */
const YEAR = new Date().getUTCFullYear() + 1;
const NOW = new Date(`${YEAR}-02-10T08:05:00Z`);

describe('todo_update and plan_create', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ now: NOW });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    await owner
      .patch('/api/settings')
      .send({ timezone: 'Europe/Berlin' })
      .expect(200);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const stateFile = (name: string) =>
    join(t.config.dataDir, 'files', 'state', name);
  const readState = (name: string) =>
    existsSync(stateFile(name)) ? readFileSync(stateFile(name), 'utf8') : '';

  const call = (name: string, args: unknown) => callTool(t.app, name, args);

  const todo = (args: unknown) => call('todo_update', args);
  const lists = async () =>
    (await owner.get('/api/files/todo').expect(200)).body as {
      open: Array<{ content: string; createdAt: string }>;
      done: Array<{ content: string; doneAt: string }>;
    };

  it('adds items with the owner-time-zone date, in the seed line format', async () => {
    const added = await todo({
      action: 'add',
      content: 'Call the plumber about the sink',
      people: ['Alice'],
      chat_id: 'wa:14155551234',
    });
    expect(added).toEqual({
      ok: true,
      action: 'add',
      updated_counts: { open_count: 1, done_count: 0 },
      changed: { wip_added: 1, wip_removed: 0, done_added: 0 },
      entry: {
        created_at: `${YEAR}-02-10 09:05`,
        content: 'Call the plumber about the sink',
      },
    });
    expect(readState('TODO.md')).toContain(
      `- [ ] [Created](${YEAR}-02-10 09:05), [ChatID](wa:14155551234), [People](Alice) | Call the plumber about the sink\n`,
    );
    await todo({ action: 'add', content: 'Call Mom on Sunday', people: [] });
    await todo({ action: 'add', content: 'Renew the passport', people: [] });
    expect((await lists()).open.map((i) => i.content)).toEqual([
      'Call the plumber about the sink',
      'Call Mom on Sunday',
      'Renew the passport',
    ]);
  });

  it('completes a single text match without asking the model', async () => {
    t.clock.advance(30 * 60_000);
    const done = await todo({ action: 'complete', content: 'the PASSPORT' });
    expect(done).toMatchObject({
      ok: true,
      action: 'complete',
      updated_counts: { open_count: 2, done_count: 1 },
      changed: { wip_added: 0, wip_removed: 1, done_added: 1 },
      entry: {
        created_at: `${YEAR}-02-10 09:05`,
        done_at: `${YEAR}-02-10 09:35`,
        content: 'Renew the passport',
      },
    });
    expect(fake.openai.requests).toHaveLength(0);
    expect(readState('TODO.DONE.md')).toContain(
      `- [x] [Created](${YEAR}-02-10 09:05), [Done](${YEAR}-02-10 09:35) | Renew the passport\n`,
    );
    expect(readState('TODO.md')).not.toContain('passport');
  });

  it('asks the model only when several items match, and follows its pick', async () => {
    fake.openai.enqueue({
      text: ['```json\n{"match": 2, "ambiguous": false}\n```'],
    });
    const done = await todo({ action: 'complete', content: 'call' });
    expect(done).toMatchObject({ entry: { content: 'Call Mom on Sunday' } });
    expect(fake.openai.requests).toHaveLength(1);
    const sent = JSON.stringify(fake.openai.requests[0].body.messages);
    expect(sent).toContain('1. Call the plumber about the sink');
    expect(sent).toContain('2. Call Mom on Sunday');
    expect(fake.openai.requests[0].body.tools).toBeUndefined();
  });

  it.each([
    [
      'not JSON',
      'I think it is the second one',
      'invalid semantic_match response',
    ],
    ['out of range', '{"match": 7}', 'invalid semantic_match response'],
    [
      'ambiguous',
      '{"match": null, "ambiguous": true}',
      'ambiguous todo item match',
    ],
    [
      'none',
      '{"match": null, "ambiguous": false}',
      'no matching todo item in TODO.md',
    ],
  ])(
    'a model answer that is %s leaves both files as they were',
    async (_label, reply, error) => {
      await todo({ action: 'add', content: 'Call the bank', people: [] });
      const before = [readState('TODO.md'), readState('TODO.DONE.md')];
      fake.openai.enqueue({ text: [reply] });
      expect(await todo({ action: 'complete', content: 'call' })).toEqual({
        error,
      });
      expect([readState('TODO.md'), readState('TODO.DONE.md')]).toEqual(before);
    },
  );

  it.each([
    [{ content: 'x', people: [] }, 'action is required'],
    [{ action: 'remove', content: 'x' }, 'invalid action: "remove"'],
    [{ action: 'add', people: [] }, 'content is required'],
    [{ action: 'add', content: '   ', people: [] }, 'content is required'],
    [{ action: 'add', content: 'x' }, 'people is required for add action'],
    [
      { action: 'add', content: 'x', people: 'Alice' },
      'people must be an array of strings',
    ],
    [
      { action: 'add', content: 'x', people: [3] },
      'people must be an array of strings',
    ],
    [
      { action: 'add', content: 'x', people: [], chat_id: '../../etc' },
      'invalid chat_id:',
    ],
    [
      { action: 'complete', content: 'dentist appointment' },
      'no matching todo item in TODO.md',
    ],
  ])('refuses %j with %j and writes nothing', async (args, error) => {
    const before = [readState('TODO.md'), readState('TODO.DONE.md')];
    const result = await todo(args);
    expect(String(result['error'])).toContain(error);
    expect([readState('TODO.md'), readState('TODO.DONE.md')]).toEqual(before);
    expect(fake.openai.requests).toHaveLength(0);
  });

  it('completes the oldest of identical items without asking the model', async () => {
    await todo({ action: 'add', content: 'Water the plants', people: [] });
    await todo({ action: 'add', content: 'water the plants!', people: [] });
    expect(
      await todo({ action: 'complete', content: 'Water the plants' }),
    ).toMatchObject({ ok: true, entry: { content: 'Water the plants' } });
    expect(fake.openai.requests).toHaveLength(0);
    expect(
      (await lists()).open.filter((i) => /plants/.test(i.content)),
    ).toEqual([expect.objectContaining({ content: 'water the plants!' })]);
  });

  it('serialises concurrent calls: no added item is lost', async () => {
    const before = (await lists()).open.length;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        todo({ action: 'add', content: `Parallel item ${i}`, people: [] }),
      ),
    );
    expect(results.every((r) => r['ok'] === true)).toBe(true);
    const open = (await lists()).open;
    expect(open).toHaveLength(before + 12);
    const completions = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        todo({ action: 'complete', content: `Parallel item ${i}` }),
      ),
    );
    expect(completions.every((r) => r['ok'] === true)).toBe(true);
    const after = await lists();
    expect(after.open).toHaveLength(before + 8);
    expect(after.done.map((d) => d.content)).toEqual(
      expect.arrayContaining([0, 1, 2, 3].map((i) => `Parallel item ${i}`)),
    );
  });

  it('says why when several items match and no model is configured', async () => {
    await owner.patch('/api/settings').send({ primaryModel: null }).expect(200);
    try {
      expect(await todo({ action: 'complete', content: 'call' })).toEqual({
        error: 'todo_update unavailable (missing llm model)',
      });
    } finally {
      await useModel(t, 'gpt-4.1-mini');
    }
  });

  it('refuses a TODO.md that is a link out of the state dir: nothing read or written there', async () => {
    const outside = join(t.config.dataDir, 'outside-secret.md');
    const secret =
      '- [ ] [Created](2026-01-01 00:00) | SECRET-ITEM\nTOP-SECRET-LINE\n';
    writeFileSync(outside, secret);
    renameSync(stateFile('TODO.md'), stateFile('TODO.md.kept'));
    symlinkSync(outside, stateFile('TODO.md'));
    try {
      for (const args of [
        { action: 'add', content: 'Leak it', people: [] },
        { action: 'complete', content: 'SECRET-ITEM' },
      ]) {
        const result = await todo(args);
        expect(String(result['error'])).toContain('TODO.md');
        expect(JSON.stringify(result)).not.toContain('SECRET');
      }
      const listed = await owner.get('/api/files/todo').expect(400);
      expect(listed.text).not.toContain('SECRET');
      expect(readFileSync(outside, 'utf8')).toBe(secret);
    } finally {
      unlinkSync(stateFile('TODO.md'));
      renameSync(stateFile('TODO.md.kept'), stateFile('TODO.md'));
    }
  });

  describe('plan_create', () => {
    const plan = (steps: number) => ({
      summary: 'Move the blog to the new host.',
      steps: Array.from({ length: steps }, (_, i) => ({
        step: `Step ${i + 1}`,
        status: 'pending',
      })),
      risks: ['DNS takes a day'],
      questions: ['Which domain?'],
    });

    it('returns the plan, cut to max_steps (OpenAI)', async () => {
      fake.openai.enqueue({
        text: [
          JSON.stringify(plan(9)).slice(0, 40),
          JSON.stringify(plan(9)).slice(40),
        ],
      });
      const result = await call('plan_create', {
        task: 'Move my blog',
        max_steps: 4,
        style: 'terse',
      });
      expect(result).toEqual({ ...plan(4) });
      const system = JSON.stringify(fake.openai.requests[0].body.messages[0]);
      expect(system).toContain('At most 4 steps');
      expect(system).toContain('Style: terse.');
    });

    it('retries once after prose, then succeeds (Gemini)', async () => {
      await useModel(t, 'gemini-2.5-flash');
      try {
        fake.gemini.enqueue(
          { text: ['Sure! Here is a plan: first, back up.'] },
          { text: [JSON.stringify(plan(3))] },
        );
        expect(await call('plan_create', { task: 'Move my blog' })).toEqual(
          plan(3),
        );
        expect(fake.gemini.requests).toHaveLength(2);
        expect(JSON.stringify(fake.gemini.requests[1].body)).toContain(
          'previous answer was not the JSON object',
        );
      } finally {
        await useModel(t, 'gpt-4.1-mini');
      }
    });

    it('gives a clear error after two invalid answers', async () => {
      fake.openai.enqueue(
        { text: ['no'] },
        { text: ['{"summary": "x", "steps": "do it"}'] },
      );
      expect(await call('plan_create', { task: 'Move my blog' })).toEqual({
        error:
          'plan_create failed: the model did not answer with a valid plan JSON (twice)',
      });
      expect(fake.openai.requests).toHaveLength(2);
    });

    it.each([
      [{ task: '   ' }, 'task is required'],
      [{ task: 'x', max_steps: 13 }, "Argument 'max_steps'"],
      [{}, "Missing required argument 'task'"],
    ])('refuses %j', async (args, error) => {
      expect(String((await call('plan_create', args))['error'])).toContain(
        error,
      );
      expect(fake.openai.requests).toHaveLength(0);
    });
  });

  it('the model adds an item through a chat turn', async () => {
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'todo_update',
            arguments: {
              action: 'add',
              content: 'Book the dentist',
              people: ['owner'],
            },
          },
        ],
      },
      { text: ['Added.'] },
    );
    const events = await (
      await chatClient(t)
    ).send(chat.id, 'remind me to book the dentist');
    const [result] = eventsNamed(events, 'tool_result') as Array<{
      result: string;
    }>;
    expect(JSON.parse(result.result)).toMatchObject({
      ok: true,
      action: 'add',
    });
    expect((await lists()).open.map((i) => i.content)).toContain(
      'Book the dentist',
    );
  });
});
