import type { MemorySearchResult } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { APP_CONFIG } from '../src/config/app-config.provider';
import type { AppConfig } from '../src/config/app-config';
import { ChatsService } from '../src/chats/chats.service';
import { AppEventBus } from '../src/events/app-event-bus';
import { MemoryIndex } from '../src/memory/memory-index';
import { seedMessage } from './support/message-doc';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

/**
 * The memory index's snapshot in DATA_DIR on the real app and embedded database: a start
 * loads it and reads what changed after it (newer messages, the journal of changed chats);
 * a snapshot it cannot trust is not used; notes, and so forgotten ones, are never in it.
 */
describe('memory index snapshot (start-up from DATA_DIR)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let db: Connection;
  let index: MemoryIndex;
  let chats: ChatsService;
  let familyChat: string;
  let snapshotPath: string;
  const at = new Date('2026-10-01T10:00:00Z');

  async function addMessage(chatId: string, content: string): Promise<string> {
    return seedMessage(db, { chatId, at, role: 'user', content });
  }

  async function search(query: string): Promise<MemorySearchResult[]> {
    return (
      await callTool<{ results: MemorySearchResult[] }>(
        t.app,
        'memory_search',
        { query, limit: 10 },
      )
    ).results;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    db = t.app.get<Connection>(getConnectionToken());
    index = t.app.get(MemoryIndex);
    chats = t.app.get(ChatsService);
    snapshotPath = join(
      t.app.get<AppConfig>(APP_CONFIG).dataDir,
      'memory-index/snapshot.bin',
    );
    familyChat = (await chats.create('Family')).id;
    await addMessage(familyChat, 'The boiler was serviced by Heizung Meyer');
    // As the first start on this data: every message read, the snapshot written.
    await index.rebuild();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('starts from the snapshot and finds what it held', async () => {
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
    expect((await search('boiler serviced')).map((r) => r.text)).toEqual([
      'The boiler was serviced by Heizung Meyer',
    ]);
  });

  it('reads the messages written after the snapshot', async () => {
    const id = await addMessage(familyChat, 'Greta starts Spanish lessons');
    await index.restart();
    expect(index.stats()).toMatchObject({ source: 'snapshot', caughtUp: 1 });
    expect((await search('spanish lesson')).map((r) => r.id)).toEqual([id]);
  });

  it('replays the journal: a chat deleted after the snapshot stays gone', async () => {
    const doomed = (await chats.create('Old plans')).id;
    await addMessage(doomed, 'The zeppelin tour is booked');
    await index.rebuild();
    expect(await search('zeppelin')).toHaveLength(1);
    await chats.remove(doomed);
    // The deletion is journaled as the index follows it.
    expect(await search('zeppelin')).toHaveLength(0);
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
    expect(await search('zeppelin')).toHaveLength(0);
  });

  it('replays the journal: a message whose text changed after the snapshot is read again', async () => {
    const id = await addMessage(familyChat, 'Draft: the kayak rental');
    await index.rebuild();
    await db
      .collection('messages')
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $set: { content: 'Final: the canoe rental is paid' } },
      );
    t.app.get(AppEventBus).emit('chats.changed', {
      chatId: familyChat,
      change: 'reply-ended',
      messageIds: [id],
      at: new Date().toISOString(),
    });
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
    expect(await search('kayak')).toHaveLength(0);
    expect((await search('canoe')).map((r) => r.id)).toEqual([id]);
  });

  it('never writes notes into the snapshot: a forgotten note is gone after a restart too', async () => {
    const { id } = await callTool<{ id: string }>(t.app, 'remember', {
      text: 'The quokka sanctuary hint is the blue door',
    });
    await index.rebuild();
    expect(readFileSync(snapshotPath, 'utf8')).not.toContain('quokka');
    await index.restart();
    expect((await search('quokka')).map((r) => r.id)).toEqual([id]);
    await owner.delete(`/api/memories/${id}`).expect(204);
    await index.restart();
    expect(await search('quokka')).toHaveLength(0);
  });

  it('does not trust a snapshot when messages changed behind it (counts differ): every message is read', async () => {
    await index.rebuild();
    const [oldest] = await db
      .collection('messages')
      .find({})
      .sort({ _id: 1 })
      .limit(1)
      .toArray();
    await db.collection('messages').deleteOne({ _id: oldest._id });
    await index.restart();
    expect(index.stats().source).toBe('database');
    expect(await search('boiler')).toHaveLength(0);
  });

  it('does not trust a snapshot of another database (the token it shares with its database differs)', async () => {
    await index.rebuild();
    await db
      .collection('memory_index')
      .updateOne({ _id: 'snapshot' as never }, { $set: { token: 'other' } });
    await index.restart();
    expect(index.stats().source).toBe('database');
    // A new snapshot and token were written: the next start uses them.
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
  });

  it('a secret saved later: the index is read again at once without it, and the snapshot rewritten', async () => {
    await addMessage(familyChat, 'my brave key is BSAlater-saved-key-778899');
    await index.rebuild();
    expect(readFileSync(snapshotPath, 'utf8')).toContain('bsalat');
    await owner
      .patch('/api/settings')
      .send({ braveApiKey: 'BSAlater-saved-key-778899' })
      .expect(200);
    // At once: everything is read again without the secret.
    expect(await search('BSAlater')).toHaveLength(0);
    expect(await search('brave')).toHaveLength(1);
    expect(index.stats().source).toBe('database');
    await index.save();
    expect(readFileSync(snapshotPath, 'utf8')).not.toContain('bsalat');
    // A start with the new secrets uses the snapshot written without it.
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
    expect(await search('BSAlater')).toHaveLength(0);
  });

  it('does not use a snapshot written with other secrets (one saved while the app was down)', async () => {
    await index.rebuild();
    const bytes = readFileSync(snapshotPath);
    const at = bytes.indexOf('"secrets":"') + '"secrets":"'.length;
    expect(at).toBeGreaterThan(20);
    // The digest in the head replaced by another of the same length.
    bytes.fill('0', at, at + 64);
    writeFileSync(snapshotPath, bytes);
    await index.restart();
    expect(index.stats().source).toBe('database');
  });

  it('a damaged snapshot (cut short) is not used: every message is read, and a new one written', async () => {
    await index.rebuild();
    const bytes = readFileSync(snapshotPath);
    writeFileSync(snapshotPath, bytes.subarray(0, bytes.length - 100));
    await index.restart();
    expect(index.stats().source).toBe('database');
    expect(await search('brave')).toHaveLength(1);
    await index.saved();
    await index.restart();
    expect(index.stats().source).toBe('snapshot');
  });

  it("an older version's snapshot (version 1's JSON) is not read: every message is read, and it is removed", async () => {
    await index.rebuild();
    const oldPath = snapshotPath.replace(/snapshot\.bin$/, 'snapshot.json');
    writeFileSync(oldPath, JSON.stringify({ version: 1, seq: 0, mini: {} }));
    writeFileSync(snapshotPath, JSON.stringify({ version: 1, seq: 0 }));
    await index.restart();
    expect(index.stats().source).toBe('database');
    expect(await search('brave')).toHaveLength(1);
    expect(existsSync(oldPath)).toBe(false);
  });
});
