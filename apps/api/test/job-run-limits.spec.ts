import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { CronJobView, CronRunView } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  AiToolProvider,
  type AiTool,
  type AiToolContext,
} from '../src/ai-tools/ai-tool';
import { ManageCronjobTool } from '../src/automations/jobs/manage-cronjob.tool';
import { settledRuns } from './support/automations-kit';
import { startFakeProviders, useModel } from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

/** A data-mode tool that does nothing but answer: a job that keeps calling it loops. */
@AiToolProvider()
@Injectable()
class PingTool implements AiTool {
  readonly name = 'ping_limits';
  readonly modes = ['data'];
  readonly description = 'Answers pong';
  readonly schema = z.object({});
  readonly promptLine = 'ping.';
  async execute(): Promise<string> {
    return JSON.stringify({ pong: true });
  }
}

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

describe("A job's own limits per run (maxRounds, maxTokensPerRun)", () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ providers: [PingTool] });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const create = (body: object) =>
    owner.post('/api/cronjobs').send({
      name: 'Loop',
      instruction: 'Ping until told otherwise.',
      cronExpression: '0 3 * * *',
      mode: 'data',
      ...body,
    });
  const jobCount = () =>
    t.app
      .get<Connection>(getConnectionToken())
      .collection('cronjobs')
      .countDocuments();
  const runsOf = (id: string) => async (): Promise<CronRunView[]> =>
    (await owner.get(`/api/cronjobs/${id}/runs`).expect(200)).body;
  const runJob = async (id: string): Promise<CronRunView> => {
    const before = (await runsOf(id)()).length;
    await owner.post(`/api/cronjobs/${id}/run`).expect(202);
    return (await settledRuns(runsOf(id), before + 1))[0];
  };
  const ping = (usage = { promptTokens: 10, completionTokens: 5 }) => ({
    toolCalls: [{ name: 'ping_limits', arguments: {} }],
    usage,
  });

  it('defaults to 20 rounds and 200,000 tokens, and takes numbers or numeric strings', async () => {
    const plain: CronJobView = (await create({}).expect(201)).body;
    expect(plain).toMatchObject({ maxRounds: 20, maxTokensPerRun: 200_000 });
    const given: CronJobView = (
      await create({ maxRounds: '5', maxTokensPerRun: '50,000' }).expect(201)
    ).body;
    expect(given).toMatchObject({ maxRounds: 5, maxTokensPerRun: 50_000 });
    const changed: CronJobView = (
      await owner
        .patch(`/api/cronjobs/${given.id}`)
        .send({ maxRounds: 100, maxTokensPerRun: 1_000 })
        .expect(200)
    ).body;
    expect(changed).toMatchObject({ maxRounds: 100, maxTokensPerRun: 1_000 });
    expect(
      (await owner.get(`/api/cronjobs/${given.id}`).expect(200)).body,
    ).toMatchObject({ maxRounds: 100, maxTokensPerRun: 1_000 });
  });

  it.each([
    [
      'zero rounds',
      { maxRounds: 0 },
      /Max rounds must be a whole number from 1 to 100/,
    ],
    [
      '101 rounds',
      { maxRounds: 101 },
      /Max rounds must be a whole number from 1 to 100/,
    ],
    [
      'fractional rounds',
      { maxRounds: 2.5 },
      /Max rounds must be a whole number/,
    ],
    [
      'rounds as words',
      { maxRounds: 'many' },
      /Max rounds must be a whole number/,
    ],
    ['null rounds', { maxRounds: null }, /Max rounds must not be null/],
    [
      'negative tokens',
      { maxTokensPerRun: -5 },
      /Max tokens per run must be a whole number from 1,000 to 10,000,000/,
    ],
    [
      'too few tokens',
      { maxTokensPerRun: 999 },
      /Max tokens per run must be a whole number from 1,000/,
    ],
    [
      'absurd tokens',
      { maxTokensPerRun: 1e12 },
      /Max tokens per run must be a whole number/,
    ],
    [
      'tokens as a list',
      { maxTokensPerRun: [1000] },
      /Max tokens per run must be a whole number/,
    ],
  ])(
    'refuses %s with 400 in words and writes nothing',
    async (_what, body, message) => {
      const before = await jobCount();
      const res = await create(body).expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(message);
      expect(await jobCount()).toBe(before);
      const job: CronJobView = (await create({}).expect(201)).body;
      await owner.patch(`/api/cronjobs/${job.id}`).send(body).expect(400);
      expect(
        (await owner.get(`/api/cronjobs/${job.id}`).expect(200)).body,
      ).toMatchObject({ maxRounds: 20, maxTokensPerRun: 200_000 });
    },
  );

  it('stops a run at its maxRounds and records why', async () => {
    const job: CronJobView = (await create({ maxRounds: 2 }).expect(201)).body;
    fake.openai.enqueue(ping(), ping(), ping(), ping());
    const run = await runJob(job.id);
    expect(run).toMatchObject({ outcome: 'error', reason: 'max-rounds' });
    expect(run.error).toBe(
      "The run stopped after 2 rounds of tool calls without finishing: the job's limit (maxRounds). Raise it in the job's settings if the job needs more.",
    );
    // Two rounds of tools, each after a model call, then the call that still wanted tools.
    expect(fake.openai.requests.length).toBeLessThanOrEqual(3);
  });

  it('stops a run before the call that would pass its maxTokensPerRun, and records why', async () => {
    const job: CronJobView = (
      await create({ maxTokensPerRun: 50_000 }).expect(201)
    ).body;
    // The first call (its prompt well under 50,000) reports 50,090 tokens: the next one may not go out.
    fake.openai.enqueue(ping({ promptTokens: 49_900, completionTokens: 190 }), {
      text: ['never sent'],
    });
    const run = await runJob(job.id);
    expect(run).toMatchObject({ outcome: 'error', reason: 'max-tokens' });
    expect(run.error).toMatch(
      /^This run stopped at 50,090 tokens: the next model call would pass the job's limit of 50,000 tokens per run/,
    );
    expect(fake.openai.requests).toHaveLength(1);
  });

  it('lets manage_cronjob set the limits from the owner’s chat only', async () => {
    const job: CronJobView = (await create({}).expect(201)).body;
    const tool = t.app.get(ManageCronjobTool);
    const context = (source: AiToolContext['source']) =>
      ({ source, chatId: null, messageId: null }) as unknown as AiToolContext;
    const fromJob = await tool.execute(
      { action: 'update', job_id: job.id, max_tokens_per_run: 5_000_000 },
      context('cron'),
    );
    expect(JSON.parse(fromJob).error).toMatch(/set by the owner only/);
    // Through the tool's own schema: a numeric string as models send it is read as a number.
    const fromOwner = JSON.parse(
      await tool.execute(
        tool.schema.parse({
          action: 'update',
          job_id: job.id,
          max_rounds: '30',
          max_tokens_per_run: 400_000,
        }),
        context('chat'),
      ),
    );
    expect(fromOwner).toMatchObject({
      max_rounds: 30,
      max_tokens_per_run: 400_000,
    });
    await expect(
      tool.execute(
        { action: 'update', job_id: job.id, max_rounds: 0 },
        context('chat'),
      ),
    ).rejects.toThrow(/maxRounds must be a whole number from 1 to 100/);
  });
});
