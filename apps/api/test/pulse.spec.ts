import type {
  ChatMessage,
  ChatSummary,
  CronRunView,
  PulseView,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
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
  type ChatClient,
} from './support/llm-test-kit';
import { openSse } from './support/sse';
import type { TestApp, TestAppOptions } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const week = berlinWeek();
const WEEKDAYS = [1, 2, 3, 4, 5];
const NIGHT = [{ start: '22:00', end: '07:00' }];

describe('Pulse', () => {
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
    bootInBerlin(week.mondayAt('08:10'), options);
  const pulse = async (owner: TestAgent): Promise<PulseView> =>
    (await owner.get('/api/pulse').expect(200)).body;
  const pulseRuns = (owner: TestAgent) => async (): Promise<CronRunView[]> =>
    (await owner.get('/api/pulse/runs').expect(200)).body;
  const messages = async (
    owner: TestAgent,
    chatId: string,
  ): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;

  describe('settings and firing', () => {
    let t: TestApp;
    let owner: TestAgent;
    beforeAll(async () => ({ t, owner } = await boot()));
    afterAll(() => t.close());

    it('starts disabled with the defaults and nothing scheduled', async () => {
      expect(await pulse(owner)).toEqual({
        enabled: false,
        activeDays: [0, 1, 2, 3, 4, 5, 6],
        pulsesPerDay: 12,
        quietHours: NIGHT,
        notes: '',
        mode: 'automations',
        remaining: 0,
        nextPulseAt: null,
        intervalMinutes: 120,
        pulsesToday: 0,
        lastPulseAt: null,
        chatId: null,
        running: false,
        timezone: 'Europe/Berlin',
        notesUpdatedAt: null,
      });
    });

    it('refuses bad settings with a clear message and changes nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ pulsesPerDay: 5 }, 'Pulses per day must be one of 48, 24, 12, 6, 2'],
        [
          { activeDays: [1, 7] },
          'Active days must be weekday numbers from 0 (Sunday) to 6 (Saturday)',
        ],
        [{ activeDays: 'weekdays' }, 'Active days'],
        [
          { quietHours: [{ start: '22:00', end: '22:00' }] },
          'quietHours[0] starts and ends at 22:00',
        ],
        [
          { quietHours: [{ start: '25:00', end: '07:00' }] },
          'Quiet hours #1 start must be a time like "22:00"',
        ],
        [
          {
            quietHours: Array.from({ length: 11 }, () => ({
              start: '01:00',
              end: '02:00',
            })),
          },
          'Quiet hours must contain no more than 10 elements',
        ],
        [{ enabled: 'yes' }, 'enabled'],
        [{ notes: 5 }, 'notes'],
        [{ remaining: 3 }, 'property remaining should not exist'],
        [{ enabled: true, pulsesPerDay: 7 }, 'Pulses per day'],
      ];
      for (const [body, text] of cases) {
        const res = await owner.patch('/api/pulse').send(body).expect(400);
        expect([res.body.message].flat().join('; ')).toContain(text);
      }
      expect(await pulse(owner)).toMatchObject({
        enabled: false,
        pulsesPerDay: 12,
        activeDays: [0, 1, 2, 3, 4, 5, 6],
        quietHours: NIGHT,
        notes: '',
      });
    });

    it('computes the interval, the pulses left today and the next pulse from the owner settings', async () => {
      t.clock.set(new Date(week.mondayAt('08:10')));
      const view: PulseView = (
        await owner
          .patch('/api/pulse')
          .send({
            enabled: true,
            pulsesPerDay: 24,
            activeDays: WEEKDAYS,
            quietHours: NIGHT,
          })
          .expect(200)
      ).body;
      // Hourly from 09:00 to 21:00 (22:00 … 06:00 are quiet): 13 left today.
      expect(view).toMatchObject({
        enabled: true,
        intervalMinutes: 60,
        remaining: 13,
        nextPulseAt: week.mondayAt('09:00'),
        pulsesToday: 0,
      });

      // Friday evening: the weekend is off and the night is quiet, so the next pulse is Monday 07:00.
      t.clock.set(new Date(week.at(4, '21:30')));
      expect(await pulse(owner)).toMatchObject({
        remaining: 0,
        nextPulseAt: week.at(7, '07:00'),
      });
      t.clock.set(new Date(week.mondayAt('08:10')));
    });

    it('cuts notes over 2,000 characters without refusing them', async () => {
      const view: PulseView = (
        await owner
          .patch('/api/pulse')
          .send({ notes: 'n'.repeat(2500) })
          .expect(200)
      ).body;
      expect(view.notes).toHaveLength(2000);
      expect(view.notesUpdatedAt).toBe(week.mondayAt('08:10'));
      await owner
        .patch('/api/pulse')
        .send({ notes: 'Check the dentist reply.' })
        .expect(200);
    });

    it('fires at its slot in the Pulse chat with the pulse prompt, counts it, and never fires the same slot twice', async () => {
      fake.openai.enqueue({ text: ['Nothing urgent; ', 'noted the dentist.'] });
      await tickAt(t, week.mondayAt('08:59:59'));
      expect(fake.openai.requests).toHaveLength(0);
      await tickAt(t, week.mondayAt('09:00:00.250'));
      const [run] = await settledRuns(pulseRuns(owner));
      expect(run).toMatchObject({
        kind: 'pulse',
        jobId: null,
        trigger: 'schedule',
        outcome: 'success',
        dueAt: week.mondayAt('09:00'),
        startedAt: week.mondayAt('09:00:00.250'),
      });

      const view = await pulse(owner);
      expect(view).toMatchObject({
        pulsesToday: 1,
        remaining: 12,
        lastPulseAt: week.mondayAt('09:00:00.250'),
        nextPulseAt: week.mondayAt('10:00'),
        chatId: run.chatId,
      });
      const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(chats.find((c) => c.id === run.chatId)).toMatchObject({
        title: 'Pulse',
        kind: 'pulse',
      });
      const thread = await messages(owner, run.chatId as string);
      expect(thread[0].content).toMatch(
        /^Pulse #1 of today, Monday, \d+ March \d{4} at 09:00 \(Europe\/Berlin, GMT\+01:00\)\./,
      );
      expect(thread[1].content).toBe('Nothing urgent; noted the dentist.');

      const system: string = fake.openai.requests[0].body.messages[0].content;
      for (const heading of [
        '## Available Tools',
        '## Pulse Status',
        '## Your Pulse Notes',
        '## Pulse Execution',
      ])
        expect(system).toContain(heading);
      expect(system).toContain('- Pulses today: 1 fired, 12 remaining');
      expect(system).toContain('Check the dentist reply.');
      expect(system.indexOf('## Pulse Status')).toBeLessThan(
        system.indexOf('## Pulse Execution'),
      );

      await tickAt(t, week.mondayAt('09:00:40'));
      expect(await pulseRuns(owner)()).toHaveLength(1);
    });

    it('skips a slot while the previous pulse still runs, and records a slot found far too late as missed', async () => {
      fake.openai.enqueue({ text: ['slow ', 'pulse'], chunkDelayMs: 500 });
      await tickAt(t, week.mondayAt('10:00:00.100'));
      await owner.post('/api/pulse/run').expect(409);
      await tickAt(t, week.mondayAt('11:00:00.100'));
      let runs = await settledRuns(pulseRuns(owner), 3);
      expect(
        runs.slice(0, 2).map((r) => [r.outcome, r.reason, r.dueAt]),
      ).toEqual([
        ['skipped', 'busy', week.mondayAt('11:00')],
        ['success', null, week.mondayAt('10:00')],
      ]);

      // The machine slept through 12:00: found at 12:40, it is not run.
      await tickAt(t, week.mondayAt('12:40'));
      runs = await settledRuns(pulseRuns(owner), 4);
      expect(runs[0]).toMatchObject({
        outcome: 'missed',
        dueAt: week.mondayAt('12:00'),
      });
      expect(runs[0].reason).toContain('40 minutes late');
      expect(fake.openai.requests).toHaveLength(1);
      expect(await pulse(owner)).toMatchObject({
        pulsesToday: 2,
        nextPulseAt: week.mondayAt('13:00'),
      });
    });

    it('runs a pulse by hand, and resets the day counter at local midnight', async () => {
      fake.openai.enqueue({ text: ['By hand.'] });
      const started = await owner.post('/api/pulse/run').expect(202);
      expect(started.body).toMatchObject({
        kind: 'pulse',
        trigger: 'manual',
        outcome: 'running',
        dueAt: null,
      });
      await settledRuns(pulseRuns(owner), 5);
      expect((await pulse(owner)).pulsesToday).toBe(3);

      // 23:30 UTC on Monday is already Tuesday 00:30 in Berlin.
      t.clock.set(new Date(week.at(1, '00:30')));
      expect(await pulse(owner)).toMatchObject({
        pulsesToday: 0,
        remaining: 15,
        nextPulseAt: week.at(1, '07:00'),
      });
    });
  });

  describe('manage_pulse', () => {
    let t: TestApp;
    let owner: TestAgent;
    let client: ChatClient;
    beforeAll(async () => {
      ({ t, owner } = await boot());
      client = await chatClient(t);
    });
    afterAll(() => t.close());

    it('answers every action with the seed shapes; refusals write nothing; long notes are cut', async () => {
      const chat: ChatSummary = (
        await owner.post('/api/chats').send({}).expect(201)
      ).body;
      await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ mode: 'automations' })
        .expect(200);
      const calls = [
        { action: 'get_config' },
        { action: 'update_config', pulses_per_day: 5 },
        {
          action: 'update_config',
          quiet_hours: [{ start: '7am', end: '9am' }],
        },
        { action: 'update_config', active_days: [8] },
        { action: 'update_config' },
        { action: 'update_notes' },
        { action: 'explode' },
        {
          action: 'update_config',
          enabled: true,
          pulses_per_day: 6,
          active_days: [0, 6],
          quiet_hours: [{ start: '23:00', end: '06:00' }],
        },
        { action: 'update_notes', notes: 'x'.repeat(2500) },
      ];
      fake.openai.enqueue(
        {
          toolCalls: calls.map((args, i) => ({
            id: `p${i}`,
            name: 'manage_pulse',
            arguments: args,
          })),
        },
        { text: ['ok'] },
      );
      const events = await client.send(chat.id, 'set up my pulse');
      const results = (
        eventsNamed(events, 'tool_result') as { result: string }[]
      ).map((r) => JSON.parse(r.result));
      expect(results[0]).toEqual({
        enabled: false,
        active_days: [0, 1, 2, 3, 4, 5, 6],
        pulses_per_day: 12,
        quiet_hours: NIGHT,
        notes: '',
        pulses_today: 0,
        last_pulse_at: null,
        timezone: 'Europe/Berlin',
        remaining: 0,
        nextPulseAt: null,
        intervalMinutes: 120,
      });
      expect(results[1].error).toBe(
        "Argument 'pulses_per_day' must be one of 48, 24, 12, 6, 2 (got 5)",
      );
      expect(results[2].error).toBe(
        'Argument \'quiet_hours[0].start\' must be a time like "22:00"; Argument \'quiet_hours[0].end\' must be a time like "07:30"',
      );
      expect(results[3].error).toBe(
        "Argument 'active_days[0]' must be a weekday number from 0 (Sunday) to 6 (Saturday)",
      );
      expect(results[4].error).toContain('update_config needs at least one of');
      expect(results[5].error).toContain('update_notes needs notes');
      expect(results[6].error).toMatch(/action/);
      // Monday 08:10 is outside the active days (Saturday, Sunday): the next pulse is Saturday 08:00 (every 4 h, 00:00 and 04:00 quiet).
      expect(results[7]).toEqual({
        success: true,
        action: 'config_updated',
        pulse: expect.objectContaining({
          enabled: true,
          pulses_per_day: 6,
          active_days: [0, 6],
          remaining: 0,
          nextPulseAt: week.at(5, '08:00'),
          intervalMinutes: 240,
        }),
      });
      expect(results[8]).toEqual({
        success: true,
        action: 'notes_updated',
        length: 2000,
      });
      expect(await pulse(owner)).toMatchObject({
        enabled: true,
        pulsesPerDay: 6,
        activeDays: [0, 6],
        quietHours: [{ start: '23:00', end: '06:00' }],
      });
      expect((await pulse(owner)).notes).toHaveLength(2000);
    });
  });

  describe('events', () => {
    it('streams job changes, run starts and ends, and pulses on /api/events', async () => {
      const { t, owner } = await boot();
      const { url, cookie } = await t.serve();
      const stream = await openSse(`${url}/api/events`, { Cookie: cookie });
      try {
        const job = (
          await owner
            .post('/api/cronjobs')
            .send({
              name: 'Evented',
              instruction: 'Go.',
              cronExpression: '0 9 * * *',
            })
            .expect(201)
        ).body;
        expect(
          (await stream.next((e) => e.event === 'cronjobs.changed')).data,
        ).toMatchObject({ jobId: job.id, change: 'created', by: 'owner' });

        fake.openai.enqueue({ text: ['Went.'] });
        await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
        const runEvents = [
          await stream.next((e) => e.event === 'automation.run'),
          await stream.next((e) => e.event === 'automation.run'),
        ].map((e) => (e.data as { run: CronRunView }).run);
        expect(runEvents.map((r) => [r.kind, r.jobId, r.outcome])).toEqual([
          ['cron', job.id, 'running'],
          ['cron', job.id, 'success'],
        ]);

        await owner.patch('/api/pulse').send({ enabled: true }).expect(200);
        expect(
          (await stream.next((e) => e.event === 'pulse.updated')).data,
        ).toMatchObject({ by: 'owner' });
        fake.openai.enqueue({ text: ['Pulse done.'] });
        const run: CronRunView = (
          await owner.post('/api/pulse/run').expect(202)
        ).body;
        expect(
          (await stream.next((e) => e.event === 'pulse.fired')).data,
        ).toMatchObject({ runId: run.id, chatId: run.chatId });
        const ended = await stream.next(
          (e) =>
            e.event === 'automation.run' &&
            (e.data as { run: CronRunView }).run.outcome === 'success',
        );
        expect((ended.data as { run: CronRunView }).run).toMatchObject({
          id: run.id,
          kind: 'pulse',
        });
      } finally {
        stream.close();
        await t.close();
      }
    });
  });

  describe('restarts', () => {
    it('keeps the settings, counters and notes, and does not catch up pulses missed while down', async () => {
      const database = keptDatabase();
      let { t, owner } = await boot({ database });
      await owner
        .patch('/api/pulse')
        .send({
          enabled: true,
          pulsesPerDay: 24,
          activeDays: WEEKDAYS,
          quietHours: NIGHT,
          notes: 'Carry on.',
        })
        .expect(200);
      fake.openai.enqueue({ text: ['First.'] });
      await tickAt(t, week.mondayAt('09:00:00.100'));
      await settledRuns(pulseRuns(owner));
      await t.close();

      ({ t, owner } = await boot({
        database,
        now: new Date(week.mondayAt('13:30')),
      }));
      try {
        const view = await pulse(owner);
        expect(view).toMatchObject({
          enabled: true,
          notes: 'Carry on.',
          pulsesToday: 1,
          nextPulseAt: week.mondayAt('14:00'),
          remaining: 8,
        });
        expect(await pulseRuns(owner)()).toHaveLength(1);
        fake.openai.enqueue({ text: ['Second.'] });
        await tickAt(t, week.mondayAt('14:00:00.100'));
        const runs = await settledRuns(pulseRuns(owner), 2);
        expect(runs[0]).toMatchObject({
          outcome: 'success',
          dueAt: week.mondayAt('14:00'),
        });
        expect((await pulse(owner)).pulsesToday).toBe(2);
        expect(fake.openai.requests).toHaveLength(2);
      } finally {
        await t.app.get<Connection>(getConnectionToken()).dropDatabase();
        await t.close();
      }
    });
  });
});
