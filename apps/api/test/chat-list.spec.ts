import type { ChatMessage, ChatSummary } from '@metatronos/shared-types';
import { getConnectionToken, getModelToken } from '@nestjs/mongoose';
import { Types, type Connection, type Model } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { ChatList } from '../src/chats/chat-list';
import { ChatReplyService } from '../src/chats/chat-reply.service';
import { ChatRecord } from '../src/chats/schemas/chat.schema';
import { ChatsService, searchSnippet } from '../src/chats/chats.service';
import { MongoSandboxService } from '../src/mongo-sandbox/mongo-sandbox.service';
import { AppEventBus } from '../src/events/app-event-bus';
import { openSse } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** `GET /api/chats` search, pin and archive, a chat's own model, and a chat stored only with its first message. */
describe('chat list', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let connection: Connection;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
    connection = t.app.get<Connection>(getConnectionToken());
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (title?: string): Promise<ChatSummary> => {
    t.clock.advance(1000);
    return (
      await owner
        .post('/api/chats')
        .send(title ? { title } : {})
        .expect(201)
    ).body;
  };
  const list = async (query = ''): Promise<ChatSummary[]> =>
    (await owner.get(`/api/chats${query}`).expect(200)).body;
  const ids = (chats: ChatSummary[]) => chats.map((c) => c.id);
  const chatCount = () => connection.collection('chats').countDocuments({});

  describe('search', () => {
    let trip: ChatSummary;
    let recipes: ChatSummary;
    let other: ChatSummary;

    beforeAll(async () => {
      trip = await newChat('Trip to Lisbon');
      recipes = await newChat('Recipes');
      other = await newChat('Unrelated');
      fake.openai.enqueue({
        text: ['Try the ', 'Pastéis de Nata (custard tarts).'],
      });
      await client.send(recipes.id, 'What should I bake for Sunday?');
      fake.openai.enqueue({ text: ['Fine.'] });
      await client.send(other.id, 'Remind me: the WiFi code is 4711.');
    });

    it('finds titles and message text, ignoring case, in the owner’s and the reply’s words', async () => {
      expect(ids(await list('?q=lisbon'))).toEqual([trip.id]);
      // An assistant reply's text, in other letter case and with accents.
      expect(ids(await list('?q=PASTÉIS'))).toEqual([recipes.id]);
      // The owner's own message.
      expect(ids(await list('?q=wifi%20code'))).toEqual([other.id]);
      expect(await list('?q=nothing-like-this')).toEqual([]);
    });

    it('answers a snippet of the matching message in its own letter case, none for a title match or without a search', async () => {
      const [found] = await list('?q=pastéis');
      expect(found.snippet).toBe('Try the Pastéis de Nata (custard tarts).');
      const [mine] = await list('?q=WIFI');
      expect(mine.snippet).toBe('Remind me: the WiFi code is 4711.');
      const [titled] = await list('?q=lisbon');
      expect(titled.id).toBe(trip.id);
      expect(titled).not.toHaveProperty('snippet');
      for (const chat of await list())
        expect(chat).not.toHaveProperty('snippet');
      // The first message holding every word in order, not the first holding one of them.
      const tarts = await newChat('Dessert');
      fake.openai.enqueue({ text: ['Custard tarts win.'] });
      await client.send(tarts.id, 'Tarts or custard, then?');
      const [both] = await list('?q=custard%20tarts');
      expect(both).toMatchObject({
        id: tarts.id,
        snippet: 'Custard tarts win.',
      });
      await owner.delete(`/api/chats/${tarts.id}`).expect(204);
    });

    it('finds a message sent after the first search, and forgets a deleted chat', async () => {
      expect(await list('?q=quokka')).toEqual([]);
      const later = await newChat('Later');
      fake.openai.enqueue({ text: ['A QUOKKA smiles.'] });
      await client.send(later.id, 'Tell me about Rottnest');
      expect(ids(await list('?q=quokka'))).toEqual([later.id]);
      await owner.delete(`/api/chats/${later.id}`).expect(204);
      expect(await list('?q=quokka')).toEqual([]);
    });

    it("finds a finished reply's words at once from the turn as stored, without reading the chat again", async () => {
      // The index is built and nothing is left to read.
      expect(await list('?q=wombat')).toEqual([]);
      const chat = await newChat('Marsupials');
      fake.openai.enqueue({ text: ['A WOMBAT digs ', 'burrows at night.'] });
      await client.send(chat.id, 'What digs the numbat burrow?');
      await t.app.get(ChatReplyService).waitForIdle(chat.id);
      const collection = connection.collection('messages');
      const find = jest.spyOn(
        Object.getPrototypeOf(collection) as typeof collection,
        'find',
      );
      try {
        const [found] = await list('?q=wombat%20digs');
        expect(found).toMatchObject({
          id: chat.id,
          snippet: 'A WOMBAT digs burrows at night.',
        });
        expect(ids(await list('?q=NUMBAT'))).toEqual([chat.id]);
        // The delivery-free turn handed both messages over: no read of the chat's messages.
        const readsOfMessages = find.mock.contexts.filter(
          (on) =>
            (on as { collectionName?: string }).collectionName === 'messages',
        );
        expect(readsOfMessages).toEqual([]);
        // A second turn appends after the first; the first stays found.
        fake.openai.enqueue({ text: ['Bilbies too.'] });
        await client.send(chat.id, 'And which others dig?');
        await t.app.get(ChatReplyService).waitForIdle(chat.id);
        expect(ids(await list('?q=bilbies'))).toEqual([chat.id]);
        expect(ids(await list('?q=wombat'))).toEqual([chat.id]);
        expect(
          find.mock.contexts.filter(
            (on) =>
              (on as { collectionName?: string }).collectionName === 'messages',
          ),
        ).toEqual([]);
      } finally {
        find.mockRestore();
      }
      await owner.delete(`/api/chats/${chat.id}`).expect(204);
      expect(await list('?q=wombat')).toEqual([]);
    });

    it("cuts the snippet from the message as written, in its own case, after letters whose lower case is longer ('İ'), emoji and accents", async () => {
      const chat = await newChat('Travel');
      const mine = 'İİ İSTANBUL: meet ÅNNA at the Café Ünter 😀 ΣΟΦΙΑ';
      const reply = 'Ånna AND Σοφια wait at the CAFÉ ÜNTER at NOON 🎉.';
      fake.openai.enqueue({
        text: ['Ånna AND Σοφια wait ', 'at the CAFÉ ÜNTER at NOON 🎉.'],
      });
      await client.send(chat.id, mine);
      await t.app.get(ChatReplyService).waitForIdle(chat.id);
      const snippets = async () =>
        Promise.all(
          [
            'café%20ünter',
            'AT%20NOON',
            'σοφια%20wait',
            '%F0%9F%8E%89',
            'istanbul',
          ].map(async (q) =>
            (await list(`?q=${q}`)).map((c) => [c.id, c.snippet]),
          ),
        );
      const expected = [
        [[chat.id, mine]],
        [[chat.id, reply]],
        [[chat.id, reply]],
        // Cut 40 characters before the match, at a space.
        [[chat.id, '…Σοφια wait at the CAFÉ ÜNTER at NOON 🎉.']],
        // Lower-cased, 'İ' is 'i̇' (two units): 'istanbul' is not in 'İSTANBUL', as before the index kept it once.
        [],
      ];
      // From the turn as stored (put without a read), then from every message read again after a restore.
      expect(await snippets()).toEqual(expected);
      await t.app
        .get(AppEventBus)
        .emitAndWait('backup.restored', { at: new Date().toISOString() });
      expect(await snippets()).toEqual(expected);
      await owner.delete(`/api/chats/${chat.id}`).expect(204);
    });

    it("finds the owner's words while the reply streams, and the whole reply once it ends", async () => {
      expect(await list('?q=echidna')).toEqual([]);
      const chat = await newChat('Monotremes');
      fake.openai.enqueue({
        text: ['The platypus ', 'lays ', 'eggs.'],
        chunkDelayMs: 150,
      });
      const running = await client.open(chat.id, 'Does the echidna lay eggs?');
      await running.next((e) => e.event === 'delta');
      expect(ids(await list('?q=echidna'))).toEqual([chat.id]);
      await running.rest();
      await t.app.get(ChatReplyService).waitForIdle(chat.id);
      const [found] = await list('?q=platypus%20lays%20eggs');
      expect(found).toMatchObject({
        id: chat.id,
        snippet: 'The platypus lays eggs.',
      });
      await owner.delete(`/api/chats/${chat.id}`).expect(204);
    });

    it('reads a restored backup’s messages again (written behind its back), snippets included', async () => {
      const at = new Date();
      await connection.collection('messages').insertOne({
        _id: new Types.ObjectId(),
        chatId: new Types.ObjectId(trip.id),
        role: 'user',
        content: 'Book the Tram 28 ride to the CASTELO early.',
        status: 'complete',
        createdAt: at,
        updatedAt: at,
      });
      // The index is the process's own copy: until a restore says so, it does not look.
      expect(await list('?q=castelo')).toEqual([]);
      await t.app
        .get(AppEventBus)
        .emitAndWait('backup.restored', { at: at.toISOString() });
      const [found] = await list('?q=castelo');
      expect(found).toMatchObject({
        id: trip.id,
        snippet: 'Book the Tram 28 ride to the CASTELO early.',
      });
      expect(ids(await list('?q=pastéis'))).toEqual([recipes.id]);
    });

    it('cuts a long message around the match at spaces, marking the cuts', () => {
      const text = `${'word '.repeat(30)}the  Quokka\nsmiles ${'more '.repeat(40)}`;
      const snippet = searchSnippet(text, 'quokka') as string;
      expect(snippet.startsWith('…word ')).toBe(true);
      expect(snippet.endsWith('more…')).toBe(true);
      expect(snippet).toContain('the Quokka smiles');
      expect(snippet.length).toBeLessThan(140);
      expect(searchSnippet('nothing here', 'quokka')).toBeNull();
    });

    it('treats the search text literally, not as a pattern', async () => {
      expect(ids(await list('?q=(custard'))).toEqual([recipes.id]);
      expect(await list('?q=.*')).toEqual([]);
      expect(await list('?q=%5B')).toEqual([]);
    });

    it('a blank search lists everything; a too long one is refused', async () => {
      expect((await list('?q=%20%20')).length).toBe((await list()).length);
      const tooLong = await owner
        .get(`/api/chats?q=${'a'.repeat(101)}`)
        .expect(400);
      expect(tooLong.body.message).toContain(
        'q must be at most 100 characters',
      );
      await owner.get('/api/chats?q=a&q=b').expect(400);
    });
  });

  // The list is kept in memory (ChatList): each write must show in it as soon as its request returns,
  // and the copy must stay what the database holds.
  describe('the list follows every write at once', () => {
    /** The view `GET /api/chats` must answer, worked out from the database: id, title, pinned, activity. */
    const fromDatabase = async (archived = false) =>
      (await connection.collection('chats').find({}).toArray())
        .filter((chat) => (chat['archived'] === true) === archived)
        .sort(
          (a, b) =>
            Number(b['pinned'] === true) - Number(a['pinned'] === true) ||
            (b['updatedAt'] as Date).getTime() -
              (a['updatedAt'] as Date).getTime() ||
            String(b._id).localeCompare(String(a._id)),
        )
        .map((chat) => ({
          id: String(chat._id),
          title: chat['title'] as string,
          pinned: chat['pinned'] === true,
          updatedAt: (chat['updatedAt'] as Date).toISOString(),
        }));
    const listed = async (archived = false) =>
      (await list(archived ? '?archived=true' : '')).map((chat) => ({
        id: chat.id,
        title: chat.title,
        pinned: chat.pinned,
        updatedAt: chat.updatedAt,
      }));
    const asStored = async () => {
      expect(await listed()).toEqual(await fromDatabase());
      expect(await listed(true)).toEqual(await fromDatabase(true));
    };

    it('finds a renamed chat by its new name, moves a chat with a reply first, titles it, forgets a deleted one', async () => {
      const older = await newChat('Kestrel notes');
      const newer = await newChat('Heron notes');
      expect(ids(await list('?q=kestrel'))).toEqual([older.id]);

      await owner
        .patch(`/api/chats/${older.id}`)
        .send({ title: 'Osprey notes' })
        .expect(200);
      expect(ids(await list('?q=osprey'))).toEqual([older.id]);
      expect(await list('?q=kestrel')).toEqual([]);
      await asStored();

      // A reply is activity: the older chat goes before the newer one.
      t.clock.advance(1000);
      fake.openai.enqueue({ text: ['Noted.'] });
      await client.send(older.id, 'Add a line');
      const order = ids(await list());
      expect(order.indexOf(older.id)).toBeLessThan(order.indexOf(newer.id));
      await asStored();

      // An untitled chat is named after its first message.
      const untitled = await newChat();
      fake.openai.enqueue({ text: ['They fly south.'] });
      await client.send(untitled.id, 'Pelican migration routes');
      expect(
        (await list()).find((chat) => chat.id === untitled.id)?.title,
      ).toBe('Pelican migration routes');
      await asStored();

      await owner
        .patch(`/api/chats/${newer.id}`)
        .send({ archived: true, pinned: true })
        .expect(200);
      expect(ids(await list())).not.toContain(newer.id);
      expect(ids(await list('?q=heron&archived=true'))).toEqual([newer.id]);
      await asStored();

      await owner.delete(`/api/chats/${older.id}`).expect(204);
      await owner.delete(`/api/chats/${newer.id}`).expect(204);
      expect(await list('?q=osprey')).toEqual([]);
      expect(await list('?q=heron&archived=true')).toEqual([]);
      await asStored();
    });

    it('reads the chats again after a restore, and keeps the writes made while they are read', async () => {
      const at = t.clock.now();
      const restoredId = new Types.ObjectId();
      await connection.collection('chats').insertOne({
        _id: restoredId,
        title: 'Restored albatross',
        autoTitle: false,
        kind: 'chat',
        pinned: false,
        archived: false,
        model: null,
        createdAt: at,
        updatedAt: at,
      });
      // The list is the process's own copy: until a restore says so, it does not look.
      expect(await list('?q=albatross')).toEqual([]);
      await t.app
        .get(AppEventBus)
        .emitAndWait('backup.restored', { at: at.toISOString() });
      expect(ids(await list('?q=albatross'))).toEqual([
        restoredId.toHexString(),
      ]);

      // Writes while the chats are read again: the read's answer (taken before them) arrives after them.
      const renamed = await newChat('Cormorant');
      const removed = await newChat('Gannet');
      const model = t.app.get<Model<ChatRecord>>(
        getModelToken(ChatRecord.name),
      );
      const find = model.find.bind(model);
      let snapshot: Promise<unknown[]> | undefined;
      let release = () => undefined as void;
      const held = new Promise<void>((resolve) => (release = resolve));
      jest.spyOn(model, 'find').mockImplementationOnce(() => {
        snapshot = find().lean().exec();
        const taken = snapshot;
        return {
          lean: () => ({
            exec: async () => {
              const rows = await taken;
              await held;
              return rows;
            },
          }),
        } as never;
      });
      const reading = t.app.get(ChatList).reloadAfterRestore();
      expect(snapshot).toBeDefined();
      await snapshot;
      const [, , created] = await Promise.all([
        owner
          .patch(`/api/chats/${renamed.id}`)
          .send({ title: 'Shag' })
          .expect(200),
        owner.delete(`/api/chats/${removed.id}`).expect(204),
        newChat('Puffin'),
      ]);
      release();
      await reading;
      expect(ids(await list('?q=shag'))).toEqual([renamed.id]);
      expect(await list('?q=cormorant')).toEqual([]);
      expect(await list('?q=gannet')).toEqual([]);
      expect(ids(await list('?q=puffin'))).toEqual([created.id]);
      await asStored();
    });
  });

  describe("a contact's chat", () => {
    it('keeps its messages from db_query while its contact may not be read, archived or not', async () => {
      const contact = await t.app
        .get(ChatsService)
        .create('WhatsApp: Eve', 'whatsapp');
      const at = t.clock.now();
      await connection.collection('messages').insertOne({
        _id: new Types.ObjectId(),
        chatId: new Types.ObjectId(contact.id),
        role: 'user',
        content: 'Eve private words',
        status: 'complete',
        createdAt: at,
        updatedAt: at,
      });
      const sandbox = t.app.get(MongoSandboxService);
      const found = async () =>
        JSON.stringify(
          await sandbox.execute({
            operation: 'find',
            collection: 'messages',
            filter: { content: 'Eve private words' },
          }),
        );
      expect(await found()).not.toContain('Eve private');
      await owner
        .patch(`/api/chats/${contact.id}`)
        .send({ archived: true })
        .expect(200);
      expect(await found()).not.toContain('Eve private');
      await owner.delete(`/api/chats/${contact.id}`).expect(204);
    });
  });

  describe('pin and archive', () => {
    it('lists pinned chats first, archived ones only with ?archived=true', async () => {
      const a = await newChat('Alpha');
      const b = await newChat('Beta');
      const c = await newChat('Gamma');
      const pinned = await owner
        .patch(`/api/chats/${a.id}`)
        .send({ pinned: true })
        .expect(200);
      expect(pinned.body).toMatchObject({
        id: a.id,
        title: 'Alpha',
        pinned: true,
        archived: false,
      });
      // Pinning is not activity: the chat keeps its time.
      expect(pinned.body.updatedAt).toBe(a.updatedAt);
      expect(ids(await list()).slice(0, 3)).toEqual([a.id, c.id, b.id]);

      await owner
        .patch(`/api/chats/${c.id}`)
        .send({ archived: true })
        .expect(200);
      const active = ids(await list());
      expect(active).not.toContain(c.id);
      expect(active.slice(0, 2)).toEqual([a.id, b.id]);
      const archived = await list('?archived=true');
      expect(ids(archived)).toEqual([c.id]);
      expect(archived[0].archived).toBe(true);
      // Search keeps to the view it is made in.
      expect(ids(await list('?q=gamma'))).toEqual([]);
      expect(ids(await list('?q=gamma&archived=true'))).toEqual([c.id]);

      await owner
        .patch(`/api/chats/${c.id}`)
        .send({ archived: false, pinned: false })
        .expect(200);
      expect(ids(await list())).toContain(c.id);
      expect(await list('?archived=true')).toEqual([]);
    });

    it('refuses bad values with 400 and changes nothing', async () => {
      const chat = await newChat('Steady');
      const before = await connection
        .collection('chats')
        .findOne({ title: 'Steady' });
      const cases: Array<[unknown, string]> = [
        [{ pinned: 'yes' }, 'pinned must be true or false'],
        [{ archived: 1 }, 'archived must be true or false'],
        [{ pinned: null }, 'pinned must not be null'],
        [{}, 'Nothing to change'],
        [{ title: '  ' }, 'title must not be blank'],
        [{ pinned: true, colour: 'red' }, 'property colour should not exist'],
        [{ model: 'llama3' }, "model: The model 'llama3' is not"],
        [{ model: 'ollama/llama3' }, "The endpoint 'ollama'"],
        [{ pinned: true, model: 'nope' }, "The model 'nope' is not"],
      ];
      for (const [body, message] of cases) {
        const res = await owner
          .patch(`/api/chats/${chat.id}`)
          .send(body as object)
          .expect(400);
        expect(JSON.stringify(res.body.message)).toContain(message);
      }
      await owner.get('/api/chats?archived=yes').expect(400);
      expect(
        await connection.collection('chats').findOne({ title: 'Steady' }),
      ).toEqual(before);
      await owner
        .patch('/api/chats/64b7f0c2a1b2c3d4e5f60718')
        .send({ pinned: true })
        .expect(404);
    });
  });

  describe("a chat's model", () => {
    it('replies with the chat’s model, and with the primary one again once cleared', async () => {
      const chat = await newChat('Gemini here');
      const set = await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ model: 'gemini-2.5-flash' })
        .expect(200);
      expect(set.body.model).toBe('gemini-2.5-flash');
      fake.gemini.enqueue({ text: ['From Gemini'] });
      const events = await client.send(chat.id, 'hello');
      expect(eventsNamed(events, 'done')).toHaveLength(1);
      expect(fake.gemini.requests[0].model).toBe('gemini-2.5-flash');
      expect(fake.openai.requests).toHaveLength(0);

      const cleared = await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ model: null })
        .expect(200);
      expect(cleared.body.model).toBeNull();
      fake.openai.enqueue({ text: ['From OpenAI'] });
      await client.send(chat.id, 'again');
      expect(fake.openai.requests[0].model).toBe('gpt-4.1-mini');
      const stored: ChatMessage[] = (
        await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
      ).body;
      expect(
        stored.filter((m) => m.role === 'assistant').map((m) => m.model),
      ).toEqual(['gemini-2.5-flash', 'gpt-4.1-mini']);
    });
  });

  describe('a chat stored with its first message', () => {
    it('POST /api/chats/messages creates the chat as the message is accepted and streams the reply', async () => {
      const { url, cookie } = await t.serve();
      const before = await chatCount();
      fake.openai.enqueue({ text: ['Hello there'] });
      const stream = await openSse(
        `${url}/api/chats/messages`,
        { Cookie: cookie },
        { method: 'POST', body: { content: 'Plan my week' } },
      );
      expect(stream.status).toBe(200);
      const events = await stream.rest();
      const [message] = eventsNamed(events, 'message') as ChatMessage[];
      expect(message).toMatchObject({ role: 'user', content: 'Plan my week' });
      expect(eventsNamed(events, 'done')).toHaveLength(1);
      expect(await chatCount()).toBe(before + 1);
      const [listed] = (await list()).filter((c) => c.id === message.chatId);
      expect(listed).toMatchObject({ title: 'Plan my week', kind: 'chat' });
    });

    it('leaves no chat behind when the first message is refused', async () => {
      const before = await chatCount();
      await owner
        .post('/api/chats/messages')
        .send({ content: '  ' })
        .expect(400);
      await owner
        .post('/api/chats/messages')
        .send({
          content: 'with a file',
          attachmentIds: ['64b7f0c2a1b2c3d4e5f60718'],
        })
        .expect(400);
      await owner
        .patch('/api/settings')
        .send({ primaryModel: null })
        .expect(200);
      try {
        const refused = await owner
          .post('/api/chats/messages')
          .send({ content: 'hello' })
          .expect(400);
        expect(refused.body.message).toContain('No model is configured');
      } finally {
        await useModel(t, 'gpt-4.1-mini');
      }
      expect(await chatCount()).toBe(before);
      expect(fake.openai.requests).toHaveLength(0);
    });
  });
});
