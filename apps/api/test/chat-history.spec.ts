import type { ChatSummary } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import {
  chatClient,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import {
  createTestApp,
  OWNER_PASSWORD,
  type TestApp,
} from './support/test-app';
import { sharedTestDatabase } from './support/test-database';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
const roles = (fake: Fake, index: number) =>
  fake.openai.requests[index].body.messages.map(
    (m: { role: string; content: string | null }) =>
      `${m.role}:${m.content ?? ''}`,
  );

describe('chat history sent with each turn', () => {
  let fake: Fake;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { CHAT_HISTORY_LIMIT: '2' } });
    await useModel(t, 'gpt-4.1-mini');
    await (await t.owner())
      .patch('/api/system-instruction')
      .send({ coreInstruction: '' })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('sends the last CHAT_HISTORY_LIMIT messages, the same after a restart as before', async () => {
    const owner = await t.owner();
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    const client = await chatClient(t);
    for (const word of ['one', 'two', 'three']) {
      fake.openai.enqueue({ text: [`re ${word}`] });
      await client.send(chat.id, word);
    }
    // A blank core instruction sends no system message; two earlier messages, then the new one.
    expect(roles(fake, 0)).toEqual(['user:one']);
    expect(roles(fake, 1)).toEqual([
      'user:one',
      'assistant:re one',
      'user:two',
    ]);
    expect(roles(fake, 2)).toEqual([
      'user:two',
      'assistant:re two',
      'user:three',
    ]);

    // A fresh server on the same database reads the history from the database, not from memory.
    const dbName = t.app.get<Connection>(getConnectionToken()).name;
    const again = await createTestApp({
      env: { CHAT_HISTORY_LIMIT: '2' },
      database: sharedTestDatabase(dbName),
    });
    try {
      await again.app.listen(0, '127.0.0.1');
      const url = (await again.app.getUrl()).replace('[::1]', '127.0.0.1');
      const login = await again
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      const cookie = String(login.headers['set-cookie']).split(';')[0];
      fake.openai.enqueue({ text: ['re four'] });
      const res = await fetch(`${url}/api/chats/${chat.id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ content: 'four' }),
      });
      await res.text();
      expect(roles(fake, 3)).toEqual([
        'user:three',
        'assistant:re three',
        'user:four',
      ]);
    } finally {
      await again.close();
    }
  });
});
