import type { ChatSummary } from '@metatronos/shared-types';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type TestAgent from 'supertest/lib/agent';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { BashTool } from '../src/files/bash/bash.tool';
import { CachePruner } from '../src/files/cache-pruner';
import { FileDirs } from '../src/files/file-dirs';
import { SettingsService } from '../src/settings/settings.service';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type Call = { name: string; arguments: Record<string, unknown> };

describe('the files mode in a chat: read_file, write_file and bash', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    client = await chatClient(t);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;

  /** One chat turn in which the model makes `calls`; the parsed tool results, in order. */
  async function callTools(calls: Call[]): Promise<Record<string, unknown>[]> {
    fake.openai.enqueue(
      { toolCalls: calls.map((call, i) => ({ id: `call_${i}`, ...call })) },
      { text: ['Done.'] },
    );
    const events = await client.send((await newChat()).id, 'go');
    return (eventsNamed(events, 'tool_result') as { result: string }[]).map(
      (r) => JSON.parse(r.result),
    );
  }

  it('offers the three tools in the files mode, and bash works on what write_file wrote', async () => {
    const registry = t.app.get(AiToolRegistry);
    const settings = await t.app.get(SettingsService).get();
    const tools = await registry.available({ source: 'chat', settings });
    for (const name of ['read_file', 'write_file', 'bash'])
      expect(tools.find((tool) => tool.name === name)?.modes).toEqual([
        'files',
      ]);

    const results = await callTools([
      {
        name: 'write_file',
        arguments: { path: 'file_state_dir/notes.md', content: 'line 1\n' },
      },
      {
        name: 'write_file',
        arguments: {
          path: 'file_state_dir/notes.md',
          content: 'line 2\n',
          mode: 'append',
        },
      },
      {
        name: 'bash',
        arguments: {
          cmd: 'wc -l < file_state_dir/notes.md && sed s/line/row/ notes.md > file_cache_dir/rows.txt',
          cwd: 'file_state_dir',
        },
      },
      { name: 'read_file', arguments: { path: 'rows.txt' } },
    ]);
    expect(results[1]).toMatchObject({
      path: 'file_state_dir/notes.md',
      size: 14,
    });
    expect(results[2]).toEqual({
      exit_code: 0,
      output: '2\n',
      truncated: false,
      timed_out: false,
    });
    expect(results[3]).toMatchObject({
      path: 'file_cache_dir/rows.txt',
      content: 'row 1\nrow 2\n',
    });
    const dirs = t.app.get(FileDirs);
    expect(dirs.stateDir).toBe(join(t.config.dataDir, 'files', 'state'));
    expect(readFileSync(join(dirs.stateDir, 'notes.md'), 'utf8')).toBe(
      'line 1\nline 2\n',
    );
  });

  it('refuses bad arguments with a tool error and runs nothing', async () => {
    const results = await callTools([
      {
        name: 'bash',
        arguments: { cmd: 'touch file_cache_dir/ran', timeout_seconds: 301 },
      },
      { name: 'bash', arguments: { cmd: 'touch ran', cwd: '/etc' } },
      {
        name: 'write_file',
        arguments: { path: 'x.txt', content: 'x', mode: 'truncate' },
      },
      { name: 'read_file', arguments: { path: '../../secrets' } },
    ]);
    for (const result of results)
      expect(result['error']).toEqual(expect.any(String));
    expect(results[0]['error']).toMatch(/timeout_seconds/);
    expect(results[1]['error']).toMatch(/^cwd: /);
    expect(results[2]['error']).toMatch(/mode/);
    const cache = t.app.get(FileDirs).cacheDir;
    expect(existsSync(join(cache, 'ran'))).toBe(false);
    expect(existsSync(join(cache, 'x.txt'))).toBe(false);
  });
});

describe('bash where bubblewrap is missing', () => {
  let fake: Fake;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({
      env: { BWRAP_PATH: '/nonexistent/bin/bwrap' },
    });
    await t.owner();
    await useModel(t, 'gpt-4.1-mini');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('is not offered to the model, says why, and a made-up call to it runs nothing', async () => {
    const client = await chatClient(t);
    const chat = (
      await (await t.owner()).post('/api/chats').send({}).expect(201)
    ).body as ChatSummary;
    // The files mode, where read_file, write_file (and bash, were it available) are offered.
    await (await t.owner())
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'files' })
      .expect(200);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_0',
            name: 'bash',
            arguments: { cmd: 'touch file_cache_dir/ran' },
          },
        ],
      },
      { text: ['Done.'] },
    );
    await client.send(chat.id, 'run it');
    const offered = (fake.openai.requests[0].body.tools ?? []).map(
      (tool: { function: { name: string } }) => tool.function.name,
    );
    expect(offered).toEqual(
      expect.arrayContaining(['read_file', 'write_file']),
    );
    expect(offered).not.toContain('bash');
    expect(existsSync(join(t.app.get(FileDirs).cacheDir, 'ran'))).toBe(false);

    const settings = await t.app.get(SettingsService).get();
    const registry = t.app.get(AiToolRegistry);
    expect(
      (await registry.available({ source: 'chat', settings })).map(
        (tool) => tool.name,
      ),
    ).not.toContain('bash');
    expect(await t.app.get(BashTool).unavailableReason()).toMatch(
      /^bubblewrap \(bwrap\) is not installed/,
    );
  });
});

describe('the cache dir pruning in the app', () => {
  it('prunes at start, by the app clock, and stops its timer on shutdown', async () => {
    const now = new Date('2026-03-01T10:00:00Z');
    const day = 24 * 3_600_000;
    let cache = '';
    const t = await createTestApp({
      now,
      beforeInit: (app) => {
        const dirs = app.get(FileDirs);
        cache = dirs.ensure().file_cache_dir;
        for (const [name, ageDays] of [
          ['stale.html', 8],
          ['recent.html', 1],
        ] as const) {
          const path = join(cache, name);
          writeFileSync(path, name);
          const at = new Date(now.getTime() - ageDays * day);
          utimesSync(path, at, at);
        }
      },
    });
    try {
      const pruner = t.app.get(CachePruner);
      expect(pruner.scheduled).toBe(true);
      await pruner.prune();
      expect(existsSync(join(cache, 'stale.html'))).toBe(false);
      expect(existsSync(join(cache, 'recent.html'))).toBe(true);
    } finally {
      await t.close();
    }
    expect(t.app.get(CachePruner).scheduled).toBe(false);
  });
});
