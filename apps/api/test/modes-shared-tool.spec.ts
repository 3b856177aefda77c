import { Injectable } from '@nestjs/common';
import type { ChatSummary } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import { z } from 'zod';
import { AiToolProvider, type AiTool } from '../src/ai-tools/ai-tool';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

/** A tool that two modes hold, contributed by this test only. */
@AiToolProvider()
@Injectable()
class SharedTool implements AiTool {
  readonly name = 'shared_lookup';
  readonly modes = ['data', 'web'];
  readonly description = 'Look something up';
  readonly schema = z.object({});
  readonly promptLine = 'look something up.';
  runs = 0;
  async execute(): Promise<string> {
    this.runs += 1;
    return JSON.stringify({ ok: true });
  }
}

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

describe('a call to a tool that several modes hold', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ providers: [SharedTool] });
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('is refused with an error naming the modes, runs nothing and does not switch', async () => {
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    fake.openai.enqueue(
      { toolCalls: [{ name: 'shared_lookup', arguments: {} }] },
      { text: ['I will pick a mode.'] },
    );
    const events = await client.send(chat.id, 'look it up');
    const [result] = eventsNamed(events, 'tool_result') as { error?: string }[];
    expect(result.error).toBe(
      "The tool 'shared_lookup' is not in the current mode 'default'; the modes 'data' and 'web' hold it: call set_mode with one of them first.",
    );
    expect(t.app.get(SharedTool).runs).toBe(0);
    expect(eventsNamed(events, 'mode')).toEqual([]);
    const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
      .body;
    expect(chats.find((c) => c.id === chat.id)?.mode).toBe('default');
  });
});
