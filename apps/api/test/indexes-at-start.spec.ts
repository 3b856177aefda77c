import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import { createTestApp, type TestApp } from './support/test-app';

/** The indexes the app's own queries need exist after start, and those queries use them. */
describe('indexes made at start', () => {
  let t: TestApp;
  let connection: Connection;

  beforeAll(async () => {
    t = await createTestApp();
    connection = t.app.get<Connection>(getConnectionToken());
  });
  afterAll(() => t.close());

  async function indexKeys(collection: string): Promise<string[]> {
    const indexes = await connection.collection(collection).indexes();
    return indexes.map((index) => JSON.stringify(index.key));
  }

  async function plan(collection: string, filter: object): Promise<string> {
    const db = connection.db;
    if (!db) throw new Error('not connected');
    const answer = await db.command({
      explain: { find: collection, filter },
      verbosity: 'queryPlanner',
    });
    return JSON.stringify(answer['queryPlanner']);
  }

  it('has the indexes of chat messages, WhatsApp messages, runs by job and attachments', async () => {
    expect(await indexKeys('messages')).toContain('{"chatId":1,"_id":-1}');
    expect(await indexKeys('whatsapp_messages')).toEqual(
      expect.arrayContaining([
        '{"phone":1,"timestamp":-1}',
        '{"from":1,"timestamp":-1}',
        '{"to":1,"timestamp":-1}',
        '{"processing":1}',
      ]),
    );
    expect(await indexKeys('automation_runs')).toContain(
      '{"jobId":1,"_id":-1}',
    );
    expect(await indexKeys('attachments')).toEqual(
      expect.arrayContaining(['{"chatId":1}', '{"sha256":1}']),
    );
  });

  it('looks chat and WhatsApp messages up through those indexes', async () => {
    const chatId = new Types.ObjectId();
    expect(await plan('messages', { chatId })).toMatch(
      /USING INDEX messages_\w+_chatId_1__id_-1/,
    );
    for (const field of ['from', 'to'])
      expect(
        await plan('whatsapp_messages', {
          [field]: '14155551234@s.whatsapp.net',
        }),
      ).toMatch(new RegExp(`USING INDEX whatsapp_messages_\\w+_${field}_1`));
    expect(await plan('whatsapp_messages', { processing: 'pending' })).toMatch(
      /USING INDEX whatsapp_messages_\w+_processing_1/,
    );
  });

  it('finds WhatsApp messages by any part of a number, in from or to, newest last', async () => {
    const own = '15550000000@s.whatsapp.net';
    const at = Date.UTC(2026, 0, 1);
    const docs = [
      ['a1', '4915112345678@s.whatsapp.net', own, 1],
      ['a2', own, '4915112345678@s.whatsapp.net', 2],
      ['b1', '4917799999999@s.whatsapp.net', own, 3],
      ['g1', '120363000000000001@g.us', own, 4],
      ['a3', '4915112345678@s.whatsapp.net', own, 5],
    ].map(([id, from, to, n]) => ({
      _id: id as string,
      from,
      fromName: null,
      to,
      body: `message ${id}`,
      timestamp: at + (n as number) * 1000,
      fromMe: from === own,
      isGroup: String(from).endsWith('@g.us'),
      phone: String(from === own ? to : from).replace(/\D/g, ''),
      receivedAt: new Date(at),
      processing: 'done',
    }));
    await connection
      .collection('whatsapp_messages')
      .insertMany(docs as never[]);
    const owner = await t.owner();
    const ids = async (query: Record<string, string | number>) =>
      (
        await owner.get('/api/whatsapp/messages').query(query).expect(200)
      ).body.messages.map((m: { id: string }) => m.id);
    expect(await ids({ contact: '4915112345678' })).toEqual(['a1', 'a2', 'a3']);
    expect(await ids({ contact: '+49 151 123' })).toEqual(['a1', 'a2', 'a3']);
    expect(await ids({ contact: '49' })).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect(await ids({ contact: '4915112345678', limit: 2 })).toEqual([
      'a2',
      'a3',
    ]);
    // The own number is in every message's from or to.
    expect(await ids({ contact: '15550000000' })).toEqual([
      'a1',
      'a2',
      'b1',
      'g1',
      'a3',
    ]);
    expect(await ids({ contact: '120363' })).toEqual(['g1']);
    expect(await ids({ contact: '999999999999999' })).toEqual([]);
    expect(await ids({ limit: 2 })).toEqual(['g1', 'a3']);
  });
});
