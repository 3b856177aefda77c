import { Logger } from '@nestjs/common';
import { ObjectId, type Collection } from 'mongodb';
import type { Types } from 'mongoose';
import { SystemClock } from '../clock/clock';
import { TurnError } from '../llm/llm-errors';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import type { ChatCache } from './chat-cache';
import { MessageWrites } from './message-writes';
import type { MessageRecord } from './schemas/message.schema';
import { FLUSH_INTERVAL_MS, TurnRecording } from './turn-recording';

/**
 * What the database holds of a reply while its turn runs (a reload mid-turn shows it, a crash
 * leaves it, marked `error` at the next start), and how many writes that costs.
 */
describe('TurnRecording (the reply as stored while it runs)', () => {
  let database: WatchedTestDatabase;
  let messages: Collection<MessageRecord>;
  /** `update` commands to `messages` in this test's database. */
  const updates = () => database.count('update');

  beforeAll(async () => {
    database = await watchedTestDatabase('test_turn_recording');
    messages = database.db.collection<MessageRecord>('messages');
  });

  afterAll(() => database.close());

  /** A reply inserted as a turn starts it (empty, `streaming`), and its recording. */
  const start = async () => {
    const now = new Date();
    const assistant: MessageRecord = {
      _id: new ObjectId() as unknown as Types.ObjectId,
      chatId: new ObjectId() as unknown as Types.ObjectId,
      role: 'assistant',
      content: '',
      parts: [],
      status: 'streaming',
      error: null,
      model: 'gpt-4.1-mini',
      usage: null,
      createdAt: now,
      updatedAt: now,
    };
    await messages.insertOne(assistant);
    const appended: MessageRecord[] = [];
    const recording = new TurnRecording(
      new MessageWrites(() => messages),
      {
        append: (_chatId: Types.ObjectId, record: MessageRecord) =>
          appended.push(record),
      } as unknown as ChatCache,
      new SystemClock(),
      new Logger('TurnRecordingSpec'),
      assistant,
      undefined,
    );
    database.commands.length = 0;
    return { recording, id: assistant._id, appended };
  };
  const stored = (id: Types.ObjectId) =>
    messages.findOne({ _id: id }) as Promise<MessageRecord>;
  /** Polls until `check` holds of the stored reply (a reload would see it then). */
  const until = async (
    id: Types.ObjectId,
    check: (m: MessageRecord) => boolean,
  ) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const message = await stored(id);
      if (check(message)) return message;
      if (Date.now() > deadline)
        throw new Error(`never stored: ${JSON.stringify(message)}`);
      await new Promise((resume) => setTimeout(resume, 20));
    }
  };
  const call = { id: 'call_1', name: 'db_query', arguments: { limit: 5 } };
  const result = {
    ...call,
    result: '{"rows":[]}',
    error: null,
    durationMs: 3,
  };

  it('a quick tool round and the answer go out in one write, with the end of the turn', async () => {
    const { recording, id, appended } = await start();
    recording.listener.text('Let me look. ');
    recording.listener.toolCall(call);
    recording.listener.toolResult(result);
    recording.listener.text('Nothing found.');
    const reply = await recording.finish(null, {
      inputTokens: 10,
      outputTokens: 4,
      totalTokens: 14,
    });
    expect(updates()).toBe(1);
    expect(reply.status).toBe('complete');
    const message = await stored(id);
    expect(message).toMatchObject({
      status: 'complete',
      content: 'Let me look. Nothing found.',
      usage: { inputTokens: 10, outputTokens: 4 },
    });
    expect(message.parts).toEqual([
      { type: 'text', text: 'Let me look. ' },
      expect.objectContaining({
        type: 'tool_call',
        id: 'call_1',
        name: 'db_query',
        result: '{"rows":[]}',
      }),
      { type: 'text', text: 'Nothing found.' },
    ]);
    expect(appended[0]).toMatchObject({ status: 'complete' });
  });

  it('a tool call still running is stored within the flush interval, then its result and the text that follows', async () => {
    const { recording, id } = await start();
    const began = Date.now();
    recording.listener.toolCall(call);
    // The tool runs on: a reload now (or a crash) must show the call.
    const running = await until(id, (m) => (m.parts?.length ?? 0) > 0);
    expect(Date.now() - began).toBeGreaterThanOrEqual(FLUSH_INTERVAL_MS - 20);
    expect(running).toMatchObject({
      status: 'streaming',
      parts: [
        expect.objectContaining({
          type: 'tool_call',
          id: 'call_1',
          result: null,
        }),
      ],
    });
    recording.listener.toolResult(result);
    recording.listener.text('Nothing');
    const later = await until(id, (m) => m.content === 'Nothing');
    expect(later.status).toBe('streaming');
    expect(later.parts?.[0]).toMatchObject({ result: '{"rows":[]}' });
    // One write per interval that saw a change: the call, then the result with the text.
    expect(updates()).toBe(2);
    await recording.finish(null, undefined);
    expect(await stored(id)).toMatchObject({
      status: 'complete',
      content: 'Nothing',
    });
  });

  it('a stop keeps every part that arrived, even those not written yet', async () => {
    const { recording, id } = await start();
    recording.listener.text('Half an ans');
    recording.listener.toolCall(call);
    const reply = await recording.finish(
      new TurnError('stopped', 'Stopped.'),
      undefined,
    );
    expect(reply.status).toBe('stopped');
    expect(await stored(id)).toMatchObject({
      status: 'stopped',
      content: 'Half an ans',
      parts: [
        { type: 'text', text: 'Half an ans' },
        expect.objectContaining({ type: 'tool_call', id: 'call_1' }),
      ],
    });
  });
});
