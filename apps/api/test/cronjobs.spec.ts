import type {
  ChatMessage,
  ChatSummary,
  CronJobView,
  CronRunView,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Collection } from 'mongodb';
import { EmbeddedWire } from '../src/database/embedded-wire';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  berlinWeek,
  bootInBerlin,
  keptDatabase,
  settledRuns,
  tickAt,
} from './support/automations-kit';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { SettingsService } from '../src/settings/settings.service';
import type { TestApp, TestAppOptions } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const week = berlinWeek();
const MONDAY_BEFORE_EIGHT = week.mondayAt('07:59:30');
const MONDAY_EIGHT = week.mondayAt('08:00');

describe('scheduled jobs', () => {
  let fake: Fake;
  beforeAll(async () => {
    fake = await startFakeProviders();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
    fake.restoreEnv();
  });

  const boot = (options: TestAppOptions = {}) =>
    bootInBerlin(MONDAY_BEFORE_EIGHT, options);

  const jobs = async (owner: TestAgent): Promise<CronJobView[]> =>
    (await owner.get('/api/cronjobs').expect(200)).body;
  const runsOf =
    (owner: TestAgent, id: string) => async (): Promise<CronRunView[]> =>
      (await owner.get(`/api/cronjobs/${id}/runs`).expect(200)).body;
  const messages = async (
    owner: TestAgent,
    chatId: string,
  ): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;
  const create = async (
    owner: TestAgent,
    body: Record<string, unknown>,
  ): Promise<CronJobView> =>
    (await owner.post('/api/cronjobs').send(body).expect(201)).body;

  describe('REST and runs', () => {
    let t: TestApp;
    let owner: TestAgent;
    beforeAll(async () => ({ t, owner } = await boot()));
    afterAll(() => t.close());

    it('creates a job with its own chat, describes it and lists its next runs in the owner timezone', async () => {
      const job = await create(owner, {
        name: 'Morning summary',
        instruction: "Summarise today's schedule.",
        cronExpression: '0 8 * * 1-5',
      });
      expect(job).toMatchObject({
        name: 'Morning summary',
        cronExpression: '0 8 * * 1-5',
        enabled: true,
        description: 'At 08:00, Monday through Friday',
        timezone: 'Europe/Berlin',
        nextRuns: [MONDAY_EIGHT, week.at(1, '08:00'), week.at(2, '08:00')],
        scheduleError: null,
        lastRun: null,
        failing: false,
        running: false,
      });
      const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(chats.find((c) => c.id === job.chatId)).toMatchObject({
        title: 'Job: Morning summary',
        kind: 'cron',
      });
      expect(
        (await owner.get(`/api/cronjobs/${job.id}`).expect(200)).body.id,
      ).toBe(job.id);
      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
    });

    it('previews an expression, or says why it is refused', async () => {
      const ok = await owner
        .get('/api/cronjobs/preview')
        .query({ cronExpression: '30 7 * * *' })
        .expect(200);
      expect(ok.body).toEqual({
        valid: true,
        error: null,
        description: 'At 07:30',
        nextRuns: [
          week.at(1, '07:30'),
          week.at(2, '07:30'),
          week.at(3, '07:30'),
        ],
        timezone: 'Europe/Berlin',
      });
      const bad = await owner
        .get('/api/cronjobs/preview')
        .query({ cronExpression: '*/20 * * * * *' })
        .expect(200);
      expect(bad.body).toMatchObject({
        valid: false,
        description: null,
        nextRuns: [],
      });
      expect(bad.body.error).toContain('more often than once a minute');
      await owner.get('/api/cronjobs/preview').expect(400);
    });

    it('refuses bad input with a clear message and writes nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ instruction: 'x', cronExpression: '0 8 * * *' }, 'name'],
        [{ name: 'x', cronExpression: '0 8 * * *' }, 'instruction'],
        [{ name: 'x', instruction: 'y' }, 'cron'],
        [
          { name: '   ', instruction: 'y', cronExpression: '0 8 * * *' },
          'name must be a non-empty text',
        ],
        [
          { name: 'x', instruction: 'y', cronExpression: 'every morning' },
          'Invalid cron expression',
        ],
        [
          { name: 'x', instruction: 'y', cronExpression: '* * * * * *' },
          'more often than once a minute',
        ],
        [
          { name: 'x', instruction: 'y', cronExpression: '0 0 30 2 *' },
          'never runs',
        ],
        [
          {
            name: 'x'.repeat(201),
            instruction: 'y',
            cronExpression: '0 8 * * *',
          },
          'name',
        ],
        [
          {
            name: 'x',
            instruction: 'y',
            cronExpression: '0 8 * * *',
            enabled: 'yes',
          },
          'enabled',
        ],
        [
          {
            name: 'x',
            instruction: 'y',
            cronExpression: '0 8 * * *',
            chatId: 'abc',
          },
          'chatId should not exist',
        ],
      ];
      for (const [body, text] of cases) {
        const res = await owner.post('/api/cronjobs').send(body).expect(400);
        expect([res.body.message].flat().join('; ')).toContain(text);
      }
      const job = await create(owner, {
        name: 'Keep',
        instruction: 'Keep me.',
        cronExpression: '0 9 * * *',
      });
      await owner
        .patch(`/api/cronjobs/${job.id}`)
        .send({ cronExpression: '61 * * * *' })
        .expect(400);
      await owner.patch(`/api/cronjobs/${job.id}`).send({}).expect(400);
      await owner
        .patch(`/api/cronjobs/${job.id}`)
        .send({ name: 'Renamed', cronExpression: 'nope' })
        .expect(400);
      await owner
        .patch('/api/cronjobs/000000000000000000000000')
        .send({ name: 'x' })
        .expect(404);
      await owner.get('/api/cronjobs/not-an-id').expect(404);
      await owner.delete('/api/cronjobs/000000000000000000000000').expect(404);
      await owner
        .post('/api/cronjobs/000000000000000000000000/run')
        .expect(404);
      await owner
        .get(`/api/cronjobs/${job.id}/runs`)
        .query({ limit: 0 })
        .expect(400);
      await owner
        .get(`/api/cronjobs/${job.id}/runs`)
        .query({ before: 'x' })
        .expect(400);
      expect(await jobs(owner)).toEqual([
        expect.objectContaining({
          id: job.id,
          name: 'Keep',
          cronExpression: '0 9 * * *',
        }),
      ]);
      const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(chats.filter((c) => c.kind === 'cron')).toHaveLength(1);
      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
    });

    it('fires a due job in its chat, records the run, and deletes job, chat and history together', async () => {
      t.clock.set(new Date(MONDAY_BEFORE_EIGHT));
      const job = await create(owner, {
        name: 'Morning summary',
        instruction: "Summarise today's schedule.",
        cronExpression: '0 8 * * 1-5',
      });
      fake.openai.enqueue({
        text: ['You have ', 'two meetings.'],
        usage: { promptTokens: 40, completionTokens: 4 },
      });

      await tickAt(t, week.at(0, '07:59:59'));
      expect(fake.openai.requests).toHaveLength(0);
      await tickAt(t, week.at(0, '08:00:00.300'));
      const [run] = await settledRuns(runsOf(owner, job.id));
      expect(run).toMatchObject({
        kind: 'cron',
        jobId: job.id,
        trigger: 'schedule',
        outcome: 'success',
        dueAt: MONDAY_EIGHT,
        startedAt: week.at(0, '08:00:00.300'),
        chatId: job.chatId,
        usage: { inputTokens: 40, outputTokens: 4, totalTokens: 44 },
        error: null,
      });
      const thread = await messages(owner, job.chatId as string);
      expect(thread.map((m) => [m.role, m.content])).toEqual([
        ['user', "Summarise today's schedule."],
        ['assistant', 'You have two meetings.'],
      ]);
      expect(run.messageId).toBe(thread[1].id);
      const system = fake.openai.requests[0].body.messages[0];
      expect(system.role).toBe('system');
      expect(system.content).toContain('## Scheduled Job Run');
      expect(system.content).toContain('"Morning summary"');
      // A job saved without a mode runs in the default mode: the Pulse blocks belong to automations.
      expect(system.content).not.toContain('## Pulse Status');
      expect(job.mode).toBe('default');

      // The same due time is never fired twice.
      await tickAt(t, week.at(0, '08:00:30'));
      expect(await runsOf(owner, job.id)()).toHaveLength(1);
      const view = (await owner.get(`/api/cronjobs/${job.id}`).expect(200))
        .body as CronJobView;
      expect(view.lastRun).toMatchObject({ id: run.id, outcome: 'success' });
      expect(view.nextRuns[0]).toBe(week.at(1, '08:00'));

      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
      await owner.get(`/api/chats/${job.chatId}/messages`).expect(404);
      await owner.get(`/api/cronjobs/${job.id}/runs`).expect(404);
      const connection = t.app.get<Connection>(getConnectionToken());
      expect(
        await connection.collection('automation_runs').countDocuments({}),
      ).toBe(0);
    });

    it('skips a run while the previous one is still running and records it as busy; "run now" answers 409 meanwhile', async () => {
      t.clock.set(new Date(week.at(0, '10:00:10')));
      const job = await create(owner, {
        name: 'Every minute',
        instruction: 'Tick.',
        cronExpression: '* * * * *',
      });
      fake.openai.enqueue({ text: ['slow ', 'answer'], chunkDelayMs: 400 });
      await tickAt(t, week.at(0, '10:01:00.050'));
      await owner.post(`/api/cronjobs/${job.id}/run`).expect(409);
      expect(
        (await owner.get(`/api/cronjobs/${job.id}`).expect(200)).body.running,
      ).toBe(true);
      await tickAt(t, week.at(0, '10:02:00.050'));
      const runs = await settledRuns(runsOf(owner, job.id), 2);
      expect(runs.map((r) => [r.outcome, r.reason, r.dueAt])).toEqual([
        ['skipped', 'busy', week.at(0, '10:02')],
        ['success', null, week.at(0, '10:01')],
      ]);
      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
    });

    it('starts the jobs due in one minute together: one query asks whether another job has their chats, their runs go in one insert', async () => {
      t.clock.set(new Date(week.at(2, '06:30')));
      const burst: CronJobView[] = [];
      for (let i = 0; i < 12; i++)
        burst.push(
          await create(owner, {
            name: `Burst ${i}`,
            instruction: 'Say hi.',
            cronExpression: '0 7 * * 3',
          }),
        );
      fake.openai.fallback = { text: ['Hi.'] };
      const chatIds = new Set(burst.map((job) => job.chatId));
      const jobIds = new Set(burst.map((job) => job.id));
      const finds = jest.spyOn(Collection.prototype, 'find');
      const counts = jest.spyOn(Collection.prototype, 'countDocuments');
      const insertMany = jest.spyOn(Collection.prototype, 'insertMany');
      const insertOne = jest.spyOn(Collection.prototype, 'insertOne');
      // On the embedded database the writes of `driverCollection` go through its wire.
      const wireCommands = jest.spyOn(EmbeddedWire.prototype, 'command');
      try {
        await tickAt(t, week.at(2, '07:00:00.100'));
        for (const job of burst) await settledRuns(runsOf(owner, job.id));
        // The chat checks: one find of the jobs whose chatId is among the burst's chats, no count.
        const chatQueries = finds.mock.calls
          .map(
            ([filter]) =>
              (filter as { chatId?: { $in?: unknown[] } })?.chatId?.$in,
          )
          .filter((ids): ids is unknown[] => Array.isArray(ids))
          .filter((ids) => ids.some((id) => chatIds.has(String(id))));
        expect(chatQueries).toHaveLength(1);
        expect(new Set(chatQueries[0].map(String))).toEqual(chatIds);
        expect(
          counts.mock.calls.filter(([filter]) =>
            chatIds.has(String((filter as { chatId?: unknown })?.chatId)),
          ),
        ).toHaveLength(0);
        // The runs' records: all 12 in one insert, none alone (by the driver or by the wire).
        const runInserts = [
          ...insertMany.mock.calls.map(([docs]) => docs),
          ...wireCommands.mock.calls.map(([, command]) =>
            command['insert'] ? command['documents'] : [],
          ),
        ]
          .map((docs) => docs as Array<{ jobId?: unknown }>)
          .filter((docs) => docs.some((doc) => jobIds.has(String(doc.jobId))));
        expect(runInserts.map((docs) => docs.length)).toEqual([12]);
        expect(
          insertOne.mock.calls.filter(([doc]) =>
            jobIds.has(String((doc as { jobId?: unknown }).jobId)),
          ),
        ).toHaveLength(0);
      } finally {
        for (const spy of [finds, counts, insertMany, insertOne, wireCommands])
          spy.mockRestore();
      }
      for (const job of burst) {
        const [run] = await runsOf(owner, job.id)();
        expect(run).toMatchObject({
          outcome: 'success',
          trigger: 'schedule',
          dueAt: week.at(2, '07:00'),
          chatId: job.chatId,
        });
        expect(
          (await messages(owner, job.chatId as string)).map((m) => m.content),
        ).toEqual(['Say hi.', 'Hi.']);
        await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
      }
    });

    it('"run now" twice at once starts one run: the other click gets 409 "already running"', async () => {
      const job = await create(owner, {
        name: 'Clicked twice',
        instruction: 'Once.',
        cronExpression: '0 12 * * *',
        enabled: false,
      });
      fake.openai.enqueue({ text: ['one ', 'run'], chunkDelayMs: 200 });
      // A slow settings read widens the gap a check-then-mark claim would leave open.
      const settings = t.app.get(SettingsService);
      const read = settings.get.bind(settings);
      const slow = jest.spyOn(settings, 'get').mockImplementation(async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return read();
      });
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          owner.post(`/api/cronjobs/${job.id}/run`),
        ),
      ).finally(() => slow.mockRestore());
      expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409, 409]);
      for (const refused of answers.filter((a) => a.status === 409))
        expect(refused.body.message).toBe(
          'This job is already running. Wait for the run to finish.',
        );
      expect(
        (await owner.get(`/api/cronjobs/${job.id}`).expect(200)).body.running,
      ).toBe(true);
      const runs = await settledRuns(runsOf(owner, job.id), 1);
      expect(runs.map((r) => [r.trigger, r.outcome])).toEqual([
        ['manual', 'success'],
      ]);
      // Free again once the run has ended.
      fake.openai.enqueue({ text: ['again'] });
      await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
      expect(await settledRuns(runsOf(owner, job.id), 2)).toHaveLength(2);
      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
    });

    it('runs a paused job by hand, flags a job that keeps failing, and clears the flag after a success', async () => {
      const job = await create(owner, {
        name: 'Fragile',
        instruction: 'Try.',
        cronExpression: '0 12 * * *',
        enabled: false,
      });
      expect(job.nextRuns).toEqual([]);
      for (let i = 0; i < 3; i++) {
        fake.openai.enqueue({ status: 500, message: 'upstream broke' });
        const started = await owner
          .post(`/api/cronjobs/${job.id}/run`)
          .expect(202);
        expect(started.body).toMatchObject({
          outcome: 'running',
          trigger: 'manual',
          dueAt: null,
        });
        await settledRuns(runsOf(owner, job.id), i + 1);
      }
      let view: CronJobView = (
        await owner.get(`/api/cronjobs/${job.id}`).expect(200)
      ).body;
      expect(view).toMatchObject({
        consecutiveFailures: 3,
        failing: true,
        lastRun: { outcome: 'error' },
      });
      expect(view.lastRun?.error).toMatch(/500|server error/i);

      fake.openai.enqueue({ text: ['Fine now.'] });
      await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
      await settledRuns(runsOf(owner, job.id), 4);
      view = (await owner.get(`/api/cronjobs/${job.id}`).expect(200)).body;
      expect(view).toMatchObject({
        consecutiveFailures: 0,
        failing: false,
        lastRun: { outcome: 'success' },
      });

      const resumed = await owner
        .patch(`/api/cronjobs/${job.id}`)
        .send({ enabled: true })
        .expect(200);
      expect(resumed.body.nextRuns).toHaveLength(3);
      await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
    });

    it('records a run that cannot start (no model) as an error instead of losing it', async () => {
      const job = await create(owner, {
        name: 'No model',
        instruction: 'x',
        cronExpression: '0 12 * * *',
      });
      await owner
        .patch('/api/settings')
        .send({ primaryModel: null })
        .expect(200);
      try {
        await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
        const [run] = await settledRuns(runsOf(owner, job.id));
        expect(run.outcome).toBe('error');
        expect(run.error).toMatch(/model/i);
      } finally {
        await useModel(t, 'gpt-4.1-mini');
        await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
      }
    });
  });

  describe('manage_cronjob', () => {
    let t: TestApp;
    let owner: TestAgent;
    let client: ChatClient;
    beforeAll(async () => {
      ({ t, owner } = await boot());
      client = await chatClient(t);
    });
    afterAll(() => t.close());

    it('lets the AI create a job from chat that then fires and writes its reply in its own chat', async () => {
      const chat: ChatSummary = (
        await owner.post('/api/chats').send({}).expect(201)
      ).body;
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'call_job',
              name: 'manage_cronjob',
              arguments: {
                action: 'create',
                name: 'Weekday summary',
                instruction: 'Summarise my schedule for today.',
                cron_expression: '0 8 * * 1-5',
              },
            },
          ],
        },
        { text: ['Done: every weekday at 08:00.'] },
      );
      const events = await client.send(
        chat.id,
        'every weekday at 8:00 summarise my schedule for today',
      );
      const [result] = eventsNamed(events, 'tool_result') as {
        result: string;
      }[];
      const created = JSON.parse(result.result);
      expect(created).toMatchObject({
        name: 'Weekday summary',
        cron_expression: '0 8 * * 1-5',
        schedule: 'At 08:00, Monday through Friday',
        enabled: true,
        next_runs: [MONDAY_EIGHT, week.at(1, '08:00'), week.at(2, '08:00')],
      });
      const [job] = await jobs(owner);
      expect(job.id).toBe(created.job_id);
      expect(
        fake.openai.requests[0].body.tools.map(
          (tool: { function: { name: string } }) => tool.function.name,
        ),
      ).toEqual([
        'set_mode',
        'save_memory',
        'remember',
        'forget',
        'memory_search',
      ]);
      // The call switched the chat to the automations mode, which holds manage_cronjob.
      expect(created.modeSwitch).toBe(
        'Switched to Automations mode, which holds manage_cronjob; its tools are loaded now.',
      );
      expect(
        fake.openai.requests[1].body.tools.map(
          (tool: { function: { name: string } }) => tool.function.name,
        ),
      ).toEqual(['set_mode', 'manage_cronjob', 'manage_pulse']);

      fake.openai.enqueue({ text: ['Today: dentist at 10:00.'] });
      await tickAt(t, week.at(0, '08:00:00.100'));
      const [run] = await settledRuns(runsOf(owner, job.id));
      expect(run.outcome).toBe('success');
      const thread = await messages(owner, job.chatId as string);
      expect(thread.map((m) => m.content)).toEqual([
        'Summarise my schedule for today.',
        'Today: dentist at 10:00.',
      ]);
    });

    it('answers every action with the seed shapes and refuses bad arguments without writing', async () => {
      const chat: ChatSummary = (
        await owner.post('/api/chats').send({}).expect(201)
      ).body;
      const [job] = await jobs(owner);
      const calls = [
        { action: 'list' },
        { action: 'toggle', job_id: job.id },
        {
          action: 'update',
          job_id: job.id,
          name: 'Renamed',
          cron_expression: '15 9 * * *',
        },
        { action: 'create', name: 'Half' },
        { action: 'update', job_id: job.id, cron_expression: '*/5 * * * * *' },
        { action: 'update' },
        { action: 'delete', job_id: '000000000000000000000000' },
        { action: 'explode' },
        { action: 'create', name: 'x', instruction: 'y', cron_expression: 5 },
        { action: 'delete', job_id: job.id },
      ];
      fake.openai.enqueue(
        {
          toolCalls: calls.map((args, i) => ({
            id: `c${i}`,
            name: 'manage_cronjob',
            arguments: args,
          })),
        },
        { text: ['ok'] },
      );
      const events = await client.send(chat.id, 'manage my jobs');
      const results = (
        eventsNamed(events, 'tool_result') as { id: string; result: string }[]
      ).map((r) => JSON.parse(r.result));
      expect(results[0].jobs).toHaveLength(1);
      expect(results[1]).toMatchObject({
        job_id: job.id,
        enabled: false,
        next_runs: [],
      });
      expect(results[2]).toMatchObject({
        name: 'Renamed',
        cron_expression: '15 9 * * *',
        schedule: 'At 09:15',
      });
      expect(results[3].error).toContain('instruction is required');
      expect(results[4].error).toContain('more often than once a minute');
      expect(results[5].error).toContain('update needs job_id');
      expect(results[6].error).toContain('not found');
      expect(results[7].error).toMatch(/action/);
      expect(results[8].error).toMatch(/cron_expression/);
      expect(results[9]).toEqual({ success: true });
      expect(await jobs(owner)).toEqual([]);
      await owner.get(`/api/chats/${job.chatId}/messages`).expect(404);
    });

    it('schedules a job the AI wrote straight into cronjobs with db_query, in a chat of its own', async () => {
      const chat: ChatSummary = (
        await owner.post('/api/chats').send({}).expect(201)
      ).body;
      t.clock.set(new Date(week.at(0, '11:00')));
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'call_db',
              name: 'db_query',
              arguments: {
                operation: 'insertOne',
                collection: 'cronjobs',
                data: {
                  name: 'Raw',
                  instruction: 'Raw run.',
                  cronExpression: '30 11 * * *',
                  enabled: true,
                },
              },
            },
          ],
        },
        { text: ['Inserted.'] },
      );
      await client.send(chat.id, 'insert a job directly');
      const [raw] = await jobs(owner);
      expect(raw).toMatchObject({
        name: 'Raw',
        createdBy: 'ai',
        chatId: expect.any(String),
        nextRuns: [
          week.at(0, '11:30'),
          week.at(1, '11:30'),
          week.at(2, '11:30'),
        ],
      });
      fake.openai.enqueue({ text: ['Raw done.'] });
      await tickAt(t, week.at(0, '11:30:00.100'));
      const [run] = await settledRuns(runsOf(owner, raw.id));
      expect(run.outcome).toBe('success');
      const [after] = await jobs(owner);
      expect(after.chatId).toBe(raw.chatId);
      expect(run.chatId).toBe(raw.chatId);
      expect(
        (await messages(owner, after.chatId as string)).map((m) => m.content),
      ).toEqual(['Raw run.', 'Raw done.']);
    });
  });

  describe('restarts', () => {
    it('re-registers jobs, catches a recently missed run up once, and records older ones as missed', async () => {
      const database = keptDatabase();
      let { t, owner } = await boot({ database });
      const hourly = await create(owner, {
        name: 'Hourly',
        instruction: 'Hourly check.',
        cronExpression: '0 * * * *',
      });
      const daily = await create(owner, {
        name: 'Daily',
        instruction: 'Daily check.',
        cronExpression: '0 8 * * *',
      });
      await t.close();

      // Down from Monday 07:59:30 to 18:20: eleven hourly times passed (08:00 … 18:00), the daily 08:00 over 10 h ago.
      fake.openai.fallback = { text: ['caught up'] };
      ({ t, owner } = await boot({
        database,
        now: new Date(week.at(0, '18:20')),
      }));
      try {
        const hourlyRuns = await settledRuns(runsOf(owner, hourly.id), 2);
        expect(hourlyRuns.map((r) => [r.trigger, r.outcome, r.dueAt])).toEqual([
          ['catch-up', 'success', week.at(0, '18:00')],
          ['catch-up', 'missed', week.at(0, '18:00')],
        ]);
        expect(hourlyRuns[1].reason).toContain('10 scheduled runs were missed');
        const dailyRuns = await settledRuns(runsOf(owner, daily.id), 1);
        expect(dailyRuns).toEqual([
          expect.objectContaining({ outcome: 'missed', dueAt: MONDAY_EIGHT }),
        ]);
        expect(dailyRuns[0].reason).toContain('1 scheduled run was missed');
        expect(fake.openai.requests).toHaveLength(1);

        // Registered again: the next hour fires on time, once.
        await tickAt(t, week.at(0, '19:00:00.200'));
        const next = await settledRuns(runsOf(owner, hourly.id), 3);
        expect(next[0]).toMatchObject({
          trigger: 'schedule',
          outcome: 'success',
          dueAt: week.at(0, '19:00'),
        });
        expect(fake.openai.requests).toHaveLength(2);
      } finally {
        await t.app.get<Connection>(getConnectionToken()).dropDatabase();
        await t.close();
      }
    });

    it('stores a run cut by a shutdown as interrupted, and closes one a crash left running', async () => {
      const database = keptDatabase();
      let { t, owner } = await boot({ database });
      const job = await create(owner, {
        name: 'Long',
        instruction: 'Long work.',
        cronExpression: '0 12 * * *',
      });
      fake.openai.enqueue({
        text: ['Partial ', 'answer', ' never', ' finished'],
        chunkDelayMs: 1500,
      });
      await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
      // Stopped once the first words are written (the growing reply is flushed while it streams),
      // however long a busy machine takes to get there: the second chunk is 1.5 s away.
      const deadline = Date.now() + 15_000;
      while (
        (await messages(owner, job.chatId as string))[1]?.content !== 'Partial '
      ) {
        if (Date.now() > deadline) throw new Error('no partial reply written');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await t.close();

      ({ t, owner } = await boot({ database }));
      const [run] = await settledRuns(runsOf(owner, job.id));
      expect(run).toMatchObject({
        outcome: 'error',
        error: 'This run was interrupted because the server stopped.',
      });
      const thread = await messages(owner, job.chatId as string);
      expect(thread[1]).toMatchObject({
        role: 'assistant',
        content: 'Partial ',
        status: 'stopped',
      });

      // A crash leaves no chance to store: the next start closes the run.
      const connection = t.app.get<Connection>(getConnectionToken());
      await connection.collection('automation_runs').insertOne({
        kind: 'cron',
        jobId: new Types.ObjectId(job.id),
        trigger: 'manual',
        outcome: 'running',
        dueAt: null,
        startedAt: new Date(),
        finishedAt: null,
        reason: null,
        error: null,
        chatId: new Types.ObjectId(job.chatId as string),
        messageId: null,
        usage: null,
      });
      await t.close();
      ({ t, owner } = await boot({ database }));
      try {
        const runs = await settledRuns(runsOf(owner, job.id), 2);
        expect(runs.map((r) => [r.outcome, r.error])).toEqual([
          ['error', 'This run was interrupted because the server stopped.'],
          ['error', 'This run was interrupted because the server stopped.'],
        ]);
      } finally {
        await t.app.get<Connection>(getConnectionToken()).dropDatabase();
        await t.close();
      }
    });
  });
});
