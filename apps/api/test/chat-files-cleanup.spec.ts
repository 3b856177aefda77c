import type {
  ChatSummary,
  ImageToolResult,
  UploadedAttachment,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { makePng } from '../../../tools/fake-llm/fake-llm-server';
import { AttachmentsService } from '../src/attachments/attachments.service';
import { MediaStore } from '../src/media/media.store';
import {
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { openSse } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';
import { sharedTestDatabase } from './support/test-database';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const HOUR = 60 * 60 * 1000;
const sha256 = (bytes: Buffer | string) =>
  createHash('sha256').update(bytes).digest('hex');

/** What one app needs to upload, send, generate images and look at the stored files and records. */
function helpers(t: TestApp, fake: Fake) {
  const db = () =>
    t.app.get<Connection>(getConnectionToken()).db as NonNullable<
      Connection['db']
    >;
  const owner = () => t.owner();
  const server = () => t.serve();
  return {
    db,
    attachmentFile: (content: Buffer | string) =>
      join(t.config.dataDir, 'attachments', sha256(content)),
    mediaFile: (png: Buffer) =>
      join(t.config.dataDir, 'media', `${sha256(png)}.png`),
    newChat: async (): Promise<ChatSummary> =>
      (await (await owner()).post('/api/chats').send({}).expect(201)).body,
    upload: async (
      content: Buffer | string,
      name: string,
    ): Promise<UploadedAttachment> =>
      (
        await (await owner())
          .post('/api/attachments')
          .attach('file', Buffer.from(content), name)
          .expect(201)
      ).body,
    /** A user message in the chat with these attachments; the model answers "ok". */
    async send(chatId: string, attachmentIds: string[]): Promise<void> {
      const { url, cookie } = await server();
      fake.openai.enqueue({ text: ['ok'] });
      const stream = await openSse(
        `${url}/api/chats/${chatId}/messages`,
        { Cookie: cookie },
        { method: 'POST', body: { content: 'see attached', attachmentIds } },
      );
      if (stream.status !== 200)
        throw new Error(`send answered ${stream.status}`);
      await stream.rest();
    },
    /** A chat turn in which the model calls generate_image and the image model returns `png`. */
    async generate(chatId: string, png: Buffer): Promise<ImageToolResult> {
      const { url, cookie } = await server();
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'call_image',
              name: 'generate_image',
              arguments: { prompt: 'a picture', shortDescription: 'Picture' },
            },
          ],
        },
        { text: ['Here it is.'] },
      );
      fake.openaiImages.enqueue({ image: png });
      const stream = await openSse(
        `${url}/api/chats/${chatId}/messages`,
        { Cookie: cookie },
        { method: 'POST', body: { content: 'draw it' } },
      );
      if (stream.status !== 200)
        throw new Error(`send answered ${stream.status}`);
      const [tool] = eventsNamed(await stream.rest(), 'tool_result') as Array<{
        name: string;
        result: string;
      }>;
      expect(tool?.name).toBe('generate_image');
      const result = JSON.parse(tool.result) as ImageToolResult;
      expect(result).toMatchObject({ success: true });
      return result;
    },
    /** Deletes the chat over HTTP and waits for both cleanups to finish. */
    async deleteChat(chatId: string): Promise<void> {
      await (await owner()).delete(`/api/chats/${chatId}`).expect(204);
      await Promise.all([
        t.app.get(MediaStore).settled(),
        t.app.get(AttachmentsService).settled(),
      ]);
    },
    mediaRecord: (id: string) =>
      db()
        .collection('media')
        .findOne({ _id: new Types.ObjectId(id) }),
    attachmentRecord: (id: string) =>
      db()
        .collection('attachments')
        .findOne({ _id: new Types.ObjectId(id) }),
  };
}

describe('deleting a chat deletes its images and attachments', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let h: ReturnType<typeof helpers>;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    await owner
      .patch('/api/settings')
      .send({ imageModel: 'gpt-image-1' })
      .expect(200);
    h = helpers(t, fake);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('removes the records and files of the images generated and the files sent in the deleted chat, and nothing else', async () => {
    const chat = await h.newChat();
    const other = await h.newChat();
    const png = makePng(5, 5, [1, 2, 3]);
    const otherPng = makePng(5, 5, [4, 5, 6]);
    const image = await h.generate(chat.id, png);
    const otherImage = await h.generate(other.id, otherPng);
    const notes = 'Only in the deleted chat\n';
    const sent = await h.upload(notes, 'notes.txt');
    await h.send(chat.id, [sent.id]);
    const unsent = await h.upload('An upload not sent yet\n', 'draft.txt');
    expect(await h.mediaRecord(image.mediaId)).not.toBeNull();
    expect(existsSync(h.mediaFile(png))).toBe(true);
    expect(existsSync(h.attachmentFile(notes))).toBe(true);

    await h.deleteChat(chat.id);

    expect(await h.mediaRecord(image.mediaId)).toBeNull();
    expect(await h.attachmentRecord(sent.id)).toBeNull();
    expect(
      await h
        .db()
        .collection('media')
        .countDocuments({ chatId: new Types.ObjectId(chat.id) }),
    ).toBe(0);
    expect(
      await h
        .db()
        .collection('attachments')
        .countDocuments({ chatId: new Types.ObjectId(chat.id) }),
    ).toBe(0);
    expect(existsSync(h.mediaFile(png))).toBe(false);
    expect(existsSync(h.attachmentFile(notes))).toBe(false);
    await owner.get(`/api/media/${image.mediaId}`).expect(404);
    await owner.get(`/api/media/${image.mediaId}/info`).expect(404);
    await owner.get(`/api/attachments/${sent.id}`).expect(404);

    // The other chat's image and the upload not sent yet are untouched.
    await owner.get(`/api/media/${otherImage.mediaId}`).expect(200);
    expect(existsSync(h.mediaFile(otherPng))).toBe(true);
    expect(
      (await owner.get(`/api/attachments/${unsent.id}`).expect(200)).text,
    ).toBe('An upload not sent yet\n');
  });

  it('keeps a file another chat still uses, and deletes it with the last chat that used it', async () => {
    const a = await h.newChat();
    const b = await h.newChat();
    const shared = 'The same bytes in two chats\n';
    const png = makePng(6, 2, [7, 8, 9]);
    const inA = await h.upload(shared, 'a.txt');
    await h.send(a.id, [inA.id]);
    const inB = await h.upload(shared, 'b.txt');
    await h.send(b.id, [inB.id]);
    const imageA = await h.generate(a.id, png);
    const imageB = await h.generate(b.id, png);

    await h.deleteChat(a.id);
    expect(await h.attachmentRecord(inA.id)).toBeNull();
    expect(await h.mediaRecord(imageA.mediaId)).toBeNull();
    await owner.get(`/api/attachments/${inA.id}`).expect(404);
    await owner.get(`/api/media/${imageA.mediaId}`).expect(404);
    expect(readFileSync(h.attachmentFile(shared), 'utf8')).toBe(shared);
    expect(
      (await owner.get(`/api/attachments/${inB.id}`).expect(200)).text,
    ).toBe(shared);
    const kept = await owner
      .get(`/api/media/${imageB.mediaId}`)
      .buffer(true)
      .expect(200);
    expect(kept.headers['content-length']).toBe(String(png.length));
    expect(existsSync(h.mediaFile(png))).toBe(true);

    await h.deleteChat(b.id);
    expect(await h.attachmentRecord(inB.id)).toBeNull();
    expect(await h.mediaRecord(imageB.mediaId)).toBeNull();
    expect(existsSync(h.attachmentFile(shared))).toBe(false);
    expect(existsSync(h.mediaFile(png))).toBe(false);
    await owner.get(`/api/attachments/${inB.id}`).expect(404);
    await owner.get(`/api/media/${imageB.mediaId}`).expect(404);
  });

  it('never leaves an image record without its file when the same bytes are saved while a chat is deleted', async () => {
    const store = t.app.get(MediaStore);
    const png = makePng(3, 3, [10, 11, 12]);
    const meta = {
      messageId: null,
      kind: 'generated' as const,
      prompt: 'p',
      shortDescription: 'race',
      model: 'gpt-image-1',
    };
    for (let round = 0; round < 20; round++) {
      const doomed = new Types.ObjectId().toHexString();
      const survivor = new Types.ObjectId().toHexString();
      await store.save(png, { ...meta, chatId: doomed });
      // The chat's last record goes while another chat saves the same bytes.
      const [, saved] = await Promise.all([
        store.deleteChat(doomed),
        store.save(png, { ...meta, chatId: survivor }),
      ]);
      expect(await store.readBytes(saved)).toEqual(png);
      await store.deleteChat(survivor);
      expect(existsSync(h.mediaFile(png))).toBe(false);
    }
  });

  it('never leaves an attachment record without its file when the same bytes are uploaded while a chat is deleted', async () => {
    const service = t.app.get(AttachmentsService);
    const content = 'Uploaded again while its chat goes\n';
    for (let round = 0; round < 20; round++) {
      const doomed = new Types.ObjectId();
      const first = await h.upload(content, 'race.txt');
      await h
        .db()
        .collection('attachments')
        .updateOne(
          { _id: new Types.ObjectId(first.id) },
          { $set: { chatId: doomed, messageId: new Types.ObjectId() } },
        );
      const [, again] = await Promise.all([
        service.deleteChat(doomed.toHexString()),
        h.upload(content, 'race.txt'),
      ]);
      expect(
        (await owner.get(`/api/attachments/${again.id}`).expect(200)).text,
      ).toBe(content);
      await h
        .db()
        .collection('attachments')
        .deleteOne({ _id: new Types.ObjectId(again.id) });
    }
  });
});

describe('uploads never sent', () => {
  const dbName = `test_${randomBytes(6).toString('hex')}`;
  let dataDir: string;
  const start = new Date();
  const boot = (now: Date) =>
    createTestApp({
      now,
      env: { DATA_DIR: dataDir },
      database: sharedTestDatabase(dbName),
    });
  let fake: Fake;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'metatron-test-cleanup-'));
    fake = await startFakeProviders();
  });
  afterAll(async () => {
    await fake.close();
    fake.restoreEnv();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('are removed at the next start once older than 24 hours; fresh and sent ones stay', async () => {
    let t = await boot(start);
    let h = helpers(t, fake);
    const kept: Array<{ id: string; content: string }> = [];
    let stale!: UploadedAttachment;
    let staleShared!: UploadedAttachment;
    try {
      await useModel(t, 'gpt-4.1-mini');
      stale = await h.upload('Abandoned, only copy\n', 'stale.txt');
      staleShared = await h.upload(
        'Same bytes as a fresh upload\n',
        'stale-shared.txt',
      );
      const sent = await h.upload('Sent the same morning\n', 'sent.txt');
      await h.send((await h.newChat()).id, [sent.id]);
      kept.push({ id: sent.id, content: 'Sent the same morning\n' });
      t.clock.advance(23 * HOUR);
      for (const content of [
        'Same bytes as a fresh upload\n',
        'Fresh, only copy\n',
      ])
        kept.push({ id: (await h.upload(content, 'fresh.txt')).id, content });
      // Nothing goes while the app runs.
      expect(await h.attachmentRecord(stale.id)).not.toBeNull();
    } finally {
      await t.close();
    }

    // 24 h and a minute after the first uploads: the next start.
    t = await boot(new Date(start.getTime() + 24 * HOUR + 60_000));
    h = helpers(t, fake);
    try {
      const owner = await t.owner();
      expect(await h.attachmentRecord(stale.id)).toBeNull();
      expect(await h.attachmentRecord(staleShared.id)).toBeNull();
      expect(existsSync(h.attachmentFile('Abandoned, only copy\n'))).toBe(
        false,
      );
      await owner.get(`/api/attachments/${stale.id}`).expect(404);
      await owner.get(`/api/attachments/${staleShared.id}`).expect(404);
      // The stale upload's bytes are kept for the fresh upload of the same content.
      expect(
        existsSync(h.attachmentFile('Same bytes as a fresh upload\n')),
      ).toBe(true);
      for (const { id, content } of kept) {
        expect(await h.attachmentRecord(id)).not.toBeNull();
        expect(
          (await owner.get(`/api/attachments/${id}`).expect(200)).text,
        ).toBe(content);
      }
    } finally {
      await h
        .db()
        .dropDatabase()
        .catch(() => undefined);
      await t.close();
    }
  });
});
