import type {
  ChatMessage,
  ChatSummary,
  UploadedAttachment,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { openSse } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
);
const ELF = Buffer.concat([
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]),
  Buffer.alloc(200),
]);

describe('attachments', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let url: string;
  let cookie: string;
  let dir: string;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { ATTACHMENT_MAX_MB: '1' } });
    owner = await t.owner();
    ({ url, cookie } = await t.serve());
    dir = join(t.config.dataDir, 'attachments');
    await useModel(t, 'gpt-4.1-mini');
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const db = () =>
    t.app.get<Connection>(getConnectionToken()).db as NonNullable<
      Connection['db']
    >;
  const upload = (content: Buffer | string, name: string) =>
    owner.post('/api/attachments').attach('file', Buffer.from(content), name);
  const uploaded = async (
    content: Buffer | string,
    name: string,
  ): Promise<UploadedAttachment> =>
    (await upload(content, name).expect(201)).body;
  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;
  const messages = async (chatId: string): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;
  const send = async (
    chatId: string,
    content: string,
    attachmentIds: string[],
  ) => {
    const stream = await openSse(
      `${url}/api/chats/${chatId}/messages`,
      { Cookie: cookie },
      { method: 'POST', body: { content, attachmentIds } },
    );
    if (stream.status !== 200)
      throw new Error(`send answered ${stream.status}`);
    return stream.rest();
  };
  const files = () => (existsSync(dir) ? readdirSync(dir) : []);
  const sha = (content: Buffer | string) =>
    createHash('sha256').update(content).digest('hex');

  describe('upload and download', () => {
    it('stores a PNG under its SHA-256 with a record, and serves it back to the owner', async () => {
      const body = await uploaded(PNG, 'dot.png');
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'dot.png',
        mime: 'image/png',
        size: PNG.length,
      });
      expect(readFileSync(join(dir, sha(PNG)))).toEqual(PNG);
      const record = await db()
        .collection('attachments')
        .findOne({ name: 'dot.png' });
      expect(record).toMatchObject({
        mime: 'image/png',
        size: PNG.length,
        sha256: sha(PNG),
        kind: 'image',
        chatId: null,
        messageId: null,
      });
      expect(record?.['createdAt']).toBeInstanceOf(Date);

      const res = await owner
        .get(`/api/attachments/${body.id}`)
        .buffer(true)
        .expect(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toContain('private');
      expect(res.headers['content-disposition']).toBe(
        `inline; filename="dot.png"; filename*=UTF-8''dot.png`,
      );
      expect(Buffer.from(res.body)).toEqual(PNG);
    });

    it('takes UTF-8 text files and serves them as downloads', async () => {
      const body = await uploaded(
        '# Shopping\n- thé vert\n',
        'Liste de courses.md',
      );
      expect(body).toMatchObject({
        name: 'Liste de courses.md',
        mime: 'text/markdown',
      });
      const res = await owner.get(`/api/attachments/${body.id}`).expect(200);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(
        /^attachment; filename="Liste de courses.md"/,
      );
      expect(res.text).toBe('# Shopping\n- thé vert\n');
      expect((await uploaded('{"a":1}', 'data.json')).mime).toBe(
        'application/json',
      );
      expect((await uploaded('a,b\n1,2\n', 'table.csv')).mime).toBe('text/csv');
      expect((await uploaded(PDF, 'scan.pdf')).mime).toBe('application/pdf');
    });

    it('refuses a file over ATTACHMENT_MAX_MB with 413 and keeps no part of it', async () => {
      const before = files();
      const res = await upload(
        Buffer.alloc(2 * 1024 * 1024, 'a'),
        'big.txt',
      ).expect(413);
      expect(res.body.message).toBe(
        'The file is larger than the 1 MB limit for attachments (ATTACHMENT_MAX_MB).',
      );
      expect(files()).toEqual(before);
      expect(
        await db()
          .collection('attachments')
          .countDocuments({ name: 'big.txt' }),
      ).toBe(0);
    });

    it('refuses types outside the allowlist (by content, not only by name) with 415', async () => {
      const before = files();
      const exe = await upload(ELF, 'tool.exe').expect(415);
      expect(exe.body.message).toContain(
        'This file type is not accepted (.exe)',
      );
      // A binary named like a text file, and a fake image.
      expect((await upload(ELF, 'notes.txt').expect(415)).body.message).toBe(
        '"notes.txt" is not a UTF-8 text file.',
      );
      expect(
        (await upload('not really a png', 'photo.png').expect(415)).body
          .message,
      ).toBe('The file is not a valid .png file.');
      expect((await upload(PNG, 'dot.txt').expect(415)).body.message).toContain(
        'does not match its name',
      );
      expect(files()).toEqual(before);
    });

    it('refuses requests that are not one file in the field "file"', async () => {
      await owner.post('/api/attachments').send({ file: 'x' }).expect(400);
      await owner
        .post('/api/attachments')
        .attach('document', PNG, 'dot.png')
        .expect(400);
      await owner
        .post('/api/attachments')
        .attach('file', Buffer.alloc(0), 'empty.txt')
        .expect(400);
    });

    it('keeps the client file name as display text only', async () => {
      const body = await uploaded('root:x:0:0\n', '../../etc/passwd.txt');
      expect(body.name).toBe('passwd.txt');
      expect(existsSync(join(dir, sha('root:x:0:0\n')))).toBe(true);
      expect(existsSync(join(t.config.dataDir, 'etc'))).toBe(false);
      expect(files().every((name) => /^[0-9a-f]{64}$/.test(name))).toBe(true);
      const odd = await uploaded('x', ' a<b>|c\u202e?.txt ');
      expect(odd.name).toBe('abc.txt');
    });

    it('needs the owner session, and answers 404 for unknown ids', async () => {
      const { id } = await uploaded('secret', 'secret.txt');
      await t
        .http()
        .post('/api/attachments')
        .attach('file', PNG, 'dot.png')
        .expect(401);
      await t.http().get(`/api/attachments/${id}`).expect(401);
      await owner.get('/api/attachments/64b7f0c2a1b2c3d4e5f60718').expect(404);
      await owner.get('/api/attachments/not-an-id').expect(404);
    });
  });

  describe('bodies that end early', () => {
    const BOUNDARY = 'mtTestBoundary7MA4YWxk';
    const head = (name: string, field = 'file') =>
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`;
    const close = `\r\n--${BOUNDARY}--\r\n`;
    const TEXT = 'line of a text file that is long enough to be written\n';

    interface RawAnswer {
      /** null when the server answered nothing (the client went away first). */
      status: number | null;
      body: string;
    }

    /**
     * Sends a multipart POST over a raw socket: `contentLength` may claim more than `body`;
     * `then` says how the client ends: wait for the answer, close the socket at once, or
     * half-close it (FIN) and wait.
     */
    const rawUpload = (
      body: Buffer | string,
      options: {
        contentLength?: number;
        chunked?: boolean;
        then?: 'answer' | 'destroy' | 'reset' | 'half-close';
        /** Written before ending the client side: waits until the server created its temp file. */
        waitForPart?: boolean;
      } = {},
    ): Promise<RawAnswer> => {
      const bytes = Buffer.from(body);
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      const framing = options.chunked
        ? 'Transfer-Encoding: chunked\r\n'
        : `Content-Length: ${options.contentLength ?? bytes.length}\r\n`;
      const payload = options.chunked
        ? Buffer.concat([
            Buffer.from(`${bytes.length.toString(16)}\r\n`),
            bytes,
            Buffer.from('\r\n0\r\n\r\n'),
          ])
        : bytes;
      return new Promise<RawAnswer>((resolve, reject) => {
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
          resolve({
            status: status ? Number(status) : null,
            body: answer.slice(answer.indexOf('\r\n\r\n') + 4),
          });
        });
        socket.once('connect', async () => {
          try {
            socket.write(
              `POST /api/attachments HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\n` +
                `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n${framing}Connection: close\r\n\r\n`,
            );
            socket.write(payload);
            if (options.waitForPart) await until(() => partFiles().length > 0);
            if (options.then === 'destroy') socket.destroy();
            else if (options.then === 'reset') socket.resetAndDestroy();
            else if (options.then === 'half-close') socket.end();
          } catch (error) {
            socket.destroy();
            reject(error);
          }
        });
      });
    };
    const partFiles = () => files().filter((name) => name.endsWith('.part'));
    const until = async (check: () => boolean, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error('timed out waiting');
        await new Promise((done) => setTimeout(done, 20));
      }
    };
    const records = () => db().collection('attachments').countDocuments();

    /** What every case must leave: no temp file, no new record, and a server that still takes an upload. */
    const expectNothingLeft = async (recordsBefore: number) => {
      // The temp file is removed asynchronously once the parser gives up; give it a moment.
      await until(() => partFiles().length === 0).catch(() => undefined);
      expect(partFiles()).toEqual([]);
      expect(await records()).toBe(recordsBefore);
      await uploaded(`still alive ${Math.random()}`, 'alive.txt');
    };

    it.each([
      ['in the middle of the file part', head('cut.txt') + TEXT.repeat(50)],
      [
        'in the part headers',
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filena`,
      ],
      ['before the closing boundary', head('open.txt') + TEXT.repeat(50)],
      [
        'after a complete part, without the closing boundary',
        head('open.txt') + TEXT.repeat(50) + `\r\n--${BOUNDARY}\r\n`,
      ],
      [
        'in a second file part',
        head('one.txt') +
          TEXT +
          `\r\n` +
          head('two.txt').replace(/^/, '') +
          TEXT.repeat(10),
      ],
      [
        'in a part of another field',
        head('doc.txt', 'document') + TEXT.repeat(10),
      ],
    ])(
      'answers 400 to a body cut %s, and keeps nothing',
      async (_case, body) => {
        const before = await records();
        const answer = await rawUpload(body);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body).statusCode).toBe(400);
        await expectNothingLeft(before);
      },
    );

    it('answers 400 to a chunked body whose form never ends', async () => {
      const before = await records();
      const answer = await rawUpload(head('chunked.txt') + TEXT.repeat(50), {
        chunked: true,
      });
      expect(answer.status).toBe(400);
      await expectNothingLeft(before);
    });

    it('answers 400 to two complete file parts', async () => {
      const before = await records();
      const answer = await rawUpload(
        head('one.txt') + TEXT + `\r\n` + head('two.txt') + TEXT + close,
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).message).toBe('Send one file per upload.');
      await expectNothingLeft(before);
    });

    it.each(['destroy', 'reset', 'half-close'] as const)(
      'survives a client that claims a longer body and goes away (%s) mid-file',
      async (then) => {
        const before = await records();
        const sent = head('gone.txt') + TEXT.repeat(400);
        const answer = await rawUpload(sent, {
          contentLength: Buffer.byteLength(sent) + 100_000,
          then,
          waitForPart: true,
        });
        // A closed socket gets no answer; a half-closed one can still read its 400.
        expect(answer.status).toBe(then === 'half-close' ? 400 : null);
        await expectNothingLeft(before);
      },
    );

    it('removes the temp files a crash left in the uploads and media dirs when the app starts, and nothing else', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'metatron-stray-'));
      const uploads = join(dataDir, 'attachments');
      const media = join(dataDir, 'media');
      mkdirSync(uploads);
      mkdirSync(media);
      const kept = sha('kept upload');
      writeFileSync(join(uploads, kept), 'kept upload');
      writeFileSync(
        join(uploads, '.upload-0b9d6c1e-2f4a-4c36-9a57-1d2e3f4a5b6c.part'),
        'half an upload',
      );
      writeFileSync(join(uploads, 'other.part'), 'x');
      const image = `${sha(PNG)}.png`;
      writeFileSync(join(media, image), PNG);
      writeFileSync(join(media, `${image}.a1b2c3d4e5f6.tmp`), 'half an image');
      writeFileSync(join(media, 'old.part'), 'x');
      const restarted = await createTestApp({ env: { DATA_DIR: dataDir } });
      try {
        expect(readdirSync(uploads)).toEqual([kept]);
        expect(readdirSync(media)).toEqual([image]);
      } finally {
        await restarted.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('sending', () => {
    it('gives OpenAI an image as an image_url data URL, keeps it on the message, and only a note in later turns', async () => {
      const chat = await newChat();
      const image = await uploaded(PNG, 'dot.png');
      fake.openai.enqueue({ text: ['A dot.'] }, { text: ['Still a dot.'] });
      const events = await send(chat.id, 'What is this?', [image.id]);
      const sent = events.find((e) => e.event === 'message')
        ?.data as ChatMessage;
      const expected = [
        {
          id: image.id,
          name: 'dot.png',
          mime: 'image/png',
          size: PNG.length,
          kind: 'image',
        },
      ];
      expect(sent.attachments).toEqual(expected);

      const user = fake.openai.requests[0].body.messages.at(-1);
      expect(user.role).toBe('user');
      expect(user.content).toEqual([
        {
          type: 'text',
          text: `What is this?\n\n[Attached image: dot.png (attachment ${image.id})]`,
        },
        {
          type: 'image_url',
          image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` },
        },
      ]);

      const stored = await messages(chat.id);
      expect(stored[0].attachments).toEqual(expected);
      const record = await db()
        .collection('attachments')
        .findOne({ _id: new Types.ObjectId(image.id) });
      expect(record?.['chatId']?.toHexString()).toBe(chat.id);
      expect(record?.['messageId']?.toHexString()).toBe(stored[0].id);

      await send(chat.id, 'And now?', []);
      const next = fake.openai.requests[1].body.messages;
      expect(
        next.find((m: { role: string }) => m.role === 'user').content,
      ).toBe(`What is this?\n[attached: dot.png (attachment ${image.id})]`);
      expect(JSON.stringify(next)).not.toContain('image_url');
    });

    it('gives the model the content of a text file, and OpenAI a PDF as a file part', async () => {
      const chat = await newChat();
      const notes = await uploaded('Buy oat milk\nCall Anna', 'todo.txt');
      const pdf = await uploaded(PDF, 'scan.pdf');
      fake.openai.enqueue({ text: ['Done.'] });
      await send(chat.id, 'Summarise', [notes.id, pdf.id]);
      const content = fake.openai.requests[0].body.messages.at(-1).content;
      expect(content).toHaveLength(2);
      expect(content[0].text).toContain(
        '--- Attached file: todo.txt (text/plain) ---\nBuy oat milk\nCall Anna\n--- End of todo.txt ---',
      );
      expect(content[0].text).toContain('[Attached PDF: scan.pdf]');
      expect(content[1]).toEqual({
        type: 'file',
        file: {
          filename: 'scan.pdf',
          file_data: `data:application/pdf;base64,${PDF.toString('base64')}`,
        },
      });
    });

    it('tells an OpenAI-compatible endpoint model that it cannot read a PDF, and sends no file part', async () => {
      await owner
        .patch('/api/settings')
        .send({
          openaiCompatible: [{ name: 'local', baseUrl: fake.openaiBaseUrl }],
          primaryModel: 'local/llama3.2',
        })
        .expect(200);
      try {
        const chat = await newChat();
        const pdf = await uploaded(PDF, 'scan.pdf');
        fake.openai.enqueue({ text: ['Done.'] });
        await send(chat.id, 'Summarise', [pdf.id]);
        const content = fake.openai.requests[0].body.messages.at(-1).content;
        expect(content).toHaveLength(1);
        expect(content[0].text).toContain('[Attached PDF: scan.pdf (');
        expect(content[0].text).toContain(
          'This model cannot read PDF files here',
        );
      } finally {
        await useModel(t, 'gpt-4.1-mini');
      }
    });

    it('gives Gemini images and PDFs as inlineData', async () => {
      await useModel(t, 'gemini-2.5-flash');
      try {
        const chat = await newChat();
        const image = await uploaded(PNG, 'dot.png');
        const pdf = await uploaded(PDF, 'scan.pdf');
        fake.gemini.enqueue({ text: ['A dot and a page.'] });
        await send(chat.id, 'Look', [image.id, pdf.id]);
        const last = fake.gemini.requests[0].body.contents.at(-1);
        expect(last.role).toBe('user');
        expect(last.parts).toEqual([
          {
            text: `Look\n\n[Attached image: dot.png (attachment ${image.id})]\n\n[Attached PDF: scan.pdf]`,
          },
          {
            inlineData: { mimeType: 'image/png', data: PNG.toString('base64') },
          },
          {
            inlineData: {
              mimeType: 'application/pdf',
              data: PDF.toString('base64'),
            },
          },
        ]);
      } finally {
        await useModel(t, 'gpt-4.1-mini');
      }
    });

    it('refuses unknown and already sent attachments with 400 and stores nothing', async () => {
      const chat = await newChat();
      const image = await uploaded(PNG, 'dot.png');
      fake.openai.enqueue({ text: ['ok'] });
      await send(chat.id, 'first', [image.id]);
      const other = await newChat();
      const fresh = await uploaded('fresh', 'fresh.txt');

      const unknown = await owner
        .post(`/api/chats/${other.id}/messages`)
        .send({
          content: 'hi',
          attachmentIds: [fresh.id, '64b7f0c2a1b2c3d4e5f60718'],
        })
        .expect(400);
      expect(unknown.body.message).toBe(
        'Unknown attachment "64b7f0c2a1b2c3d4e5f60718": upload the file first.',
      );
      const reused = await owner
        .post(`/api/chats/${other.id}/messages`)
        .send({ content: 'hi', attachmentIds: [image.id] })
        .expect(400);
      expect(reused.body.message).toContain(
        `Already sent with another message: "dot.png" (${image.id})`,
      );
      const bad = await owner
        .post(`/api/chats/${other.id}/messages`)
        .send({ content: 'hi', attachmentIds: ['nope'] })
        .expect(400);
      expect(JSON.stringify(bad.body.message)).toContain(
        'each of attachmentIds must be an attachment id',
      );
      const tooMany = Array.from(
        { length: 11 },
        (_, i) => `64b7f0c2a1b2c3d4e5f607${String(i).padStart(2, '0')}`,
      );
      await owner
        .post(`/api/chats/${other.id}/messages`)
        .send({ content: 'hi', attachmentIds: tooMany })
        .expect(400);
      await owner
        .post(`/api/chats/${other.id}/messages`)
        .send({ content: 'hi', attachmentIds: [fresh.id, fresh.id] })
        .expect(400);

      expect(await messages(other.id)).toEqual([]);
      expect(fake.openai.requests).toHaveLength(1);
      const record = await db()
        .collection('attachments')
        .findOne({ name: 'fresh.txt' });
      expect(record).toMatchObject({ chatId: null, messageId: null });
    });

    it('still sends a message without attachments as plain text', async () => {
      const client = await chatClient(t);
      const chat = await newChat();
      fake.openai.enqueue({ text: ['hi'] });
      await client.send(chat.id, 'hello');
      expect(fake.openai.requests[0].body.messages.at(-1)).toEqual({
        role: 'user',
        content: 'hello',
      });
      expect((await messages(chat.id))[0].attachments).toBeUndefined();
    });
  });
});
