import type {
  ChatSummary,
  ImageToolResult,
  MediaInfo,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  FAKE_PNG,
  makePng,
  type FakeRecordedRequest,
} from '../../../tools/fake-llm/fake-llm-server';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { readImageInfo } from '../src/media/image-info';
import { SettingsService } from '../src/settings/settings.service';
import {
  chatClient,
  eventsNamed,
  GEMINI_TEST_KEY,
  OPENAI_TEST_KEY,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { openSse, type SseEvent } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type ToolResultEvent = { name: string; result: string; error: string | null };

const sha256 = (bytes: Buffer) =>
  createHash('sha256').update(bytes).digest('hex');

/** The model's follow-up after a tool: repeats the tool's markdown (what the prompt asks it to do). */
const echoMarkdown = (request: FakeRecordedRequest) => {
  const last = request.body.messages.at(-1) as { content: string };
  const parsed = JSON.parse(last.content) as {
    markdown?: string;
    error?: string;
  };
  return {
    text: [
      parsed.markdown
        ? `Here it is: ${parsed.markdown}`
        : `Sorry: ${parsed.error}`,
    ],
  };
};

describe('media: generate_image, edit_image and GET /api/media/:id', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let chat: ChatSummary;

  beforeAll(async () => {
    fake = await startFakeProviders();
    // A tool time limit below the image one: the image tools must get IMAGE_TIMEOUT_MS, not LLM_TOOL_TIMEOUT_MS.
    t = await createTestApp({
      env: { IMAGE_TIMEOUT_MS: '1000', LLM_TOOL_TIMEOUT_MS: '300' },
    });
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
    chat = (await owner.post('/api/chats').send({}).expect(201)).body;
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const setImageModel = (imageModel: string | null) =>
    owner.patch('/api/settings').send({ imageModel }).expect(200);
  const mediaDir = () => join(t.config.dataDir, 'media');
  const mediaRecords = () =>
    t.app.get<Connection>(getConnectionToken()).collection('media');

  /** One chat turn in which the model calls `name` with `args`, then echoes the result. */
  async function callTool(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{
    events: SseEvent[];
    tool: ToolResultEvent;
    body: Record<string, unknown>;
  }> {
    fake.openai.enqueue(
      { toolCalls: [{ id: `call_${name}`, name, arguments: args }] },
      echoMarkdown,
    );
    const events = await client.send(chat.id, `please ${name}`);
    const tool = eventsNamed(events, 'tool_result')[0] as ToolResultEvent;
    expect(tool?.name).toBe(name);
    return { events, tool, body: JSON.parse(tool.result) };
  }

  async function generate(
    prompt = 'A red fox in fresh snow, watercolour',
    shortDescription = 'Red fox in snow',
  ): Promise<ImageToolResult> {
    const { body } = await callTool('generate_image', {
      prompt,
      shortDescription,
    });
    expect(body).toMatchObject({ success: true });
    return body as unknown as ImageToolResult;
  }

  describe('with an OpenAI image model', () => {
    beforeAll(() => setImageModel('gpt-image-1'));

    it('generates an image in a chat turn: file on disk, media record, tool result and markdown in the reply', async () => {
      const { events, tool, body } = await callTool('generate_image', {
        prompt: 'A red fox in fresh snow, watercolour',
        shortDescription: 'Red fox in snow',
      });
      expect(tool.error).toBeNull();
      const result = body as unknown as ImageToolResult;
      expect(result).toEqual({
        success: true,
        mediaId: expect.stringMatching(/^[0-9a-f]{24}$/),
        url: `/api/media/${result.mediaId}`,
        markdown: `![Red fox in snow](/api/media/${result.mediaId})`,
        width: 4,
        height: 3,
        // The new chat was in the default mode: the call switched it to media, which holds the tool.
        modeSwitch:
          'Switched to Media mode, which holds generate_image; its tools are loaded now.',
      });

      // The tool was named in the prompt, and offered once the call switched to its mode; the image request
      // reached the fake with the right model and key.
      const chatRequest = fake.openai.requests[1];
      expect(
        chatRequest.body.tools.map(
          (x: { function: { name: string } }) => x.function.name,
        ),
      ).toEqual(expect.arrayContaining(['generate_image', 'edit_image']));
      expect(chatRequest.body.messages[0].content).toContain('generate_image');
      expect(fake.openaiImages.requests).toHaveLength(1);
      const imageRequest = fake.openaiImages.requests[0];
      expect(imageRequest).toMatchObject({
        path: '/v1/images/generations',
        apiKey: OPENAI_TEST_KEY,
        model: 'gpt-image-1',
      });
      expect(imageRequest.body).toMatchObject({
        model: 'gpt-image-1',
        prompt: 'A red fox in fresh snow, watercolour',
        n: 1,
      });
      expect(imageRequest.body.response_format).toBeUndefined();

      // The reply carries the markdown; the record links to the chat and the assistant message.
      const done = eventsNamed(events, 'done')[0] as { messageId: string };
      const messages = (
        await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
      ).body as Array<{ id: string; content: string }>;
      expect(messages.find((m) => m.id === done.messageId)?.content).toContain(
        result.markdown,
      );
      const hash = sha256(FAKE_PNG);
      expect(
        readFileSync(join(mediaDir(), `${hash}.png`)).equals(FAKE_PNG),
      ).toBe(true);
      const record = await mediaRecords().findOne({
        _id: new Types.ObjectId(result.mediaId),
      });
      expect(record).toMatchObject({
        kind: 'generated',
        prompt: 'A red fox in fresh snow, watercolour',
        shortDescription: 'Red fox in snow',
        model: 'gpt-image-1',
        mime: 'image/png',
        size: FAKE_PNG.length,
        width: 4,
        height: 3,
        sha256: hash,
      });
      expect(String(record?.['chatId'])).toBe(chat.id);
      expect(String(record?.['messageId'])).toBe(done.messageId);

      const info: MediaInfo = (
        await owner.get(`/api/media/${result.mediaId}/info`).expect(200)
      ).body;
      expect(info).toMatchObject({
        id: result.mediaId,
        chatId: chat.id,
        messageId: done.messageId,
        kind: 'generated',
        width: 4,
        height: 3,
        sourceMediaId: null,
        url: result.url,
      });
    });

    it('serves the file to the owner with cache headers and 304, and refuses anyone else', async () => {
      const { mediaId } = await generate();
      const res = await owner
        .get(`/api/media/${mediaId}`)
        .buffer(true)
        .parse((response, done) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .expect(200);
      expect((res.body as Buffer).equals(FAKE_PNG)).toBe(true);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers['content-length']).toBe(String(FAKE_PNG.length));
      expect(res.headers['cache-control']).toBe(
        'private, max-age=31536000, immutable',
      );
      expect(res.headers['etag']).toBe(`"${sha256(FAKE_PNG)}"`);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-disposition']).toBe(
        'inline; filename="Red-fox-in-snow.png"',
      );

      const cached = await owner
        .get(`/api/media/${mediaId}`)
        .set('If-None-Match', res.headers['etag'])
        .expect(304);
      expect(cached.headers['etag']).toBe(res.headers['etag']);
      await owner
        .get(`/api/media/${mediaId}`)
        .set('If-None-Match', '"something-else"')
        .expect(200);

      await t.http().get(`/api/media/${mediaId}`).expect(401);
      await t.http().get(`/api/media/${mediaId}/info`).expect(401);
    });

    it('keeps one file per content (written atomically) for several records', async () => {
      const a = await generate('same picture', 'Same');
      const b = await generate('same picture again', 'Same again');
      expect(a.mediaId).not.toBe(b.mediaId);
      const files = readdirSync(mediaDir());
      expect(files.filter((f) => f.startsWith(sha256(FAKE_PNG)))).toEqual([
        `${sha256(FAKE_PNG)}.png`,
      ]);
      expect(files.some((f) => f.endsWith('.tmp'))).toBe(false);
      expect(
        await mediaRecords().countDocuments({ sha256: sha256(FAKE_PNG) }),
      ).toBeGreaterThanOrEqual(2);
    });

    it('edits an image by id: the source bytes reach the model, the new image links to its source', async () => {
      const { mediaId: sourceId } = await generate();
      const edited = makePng(8, 6, [10, 120, 240]);
      fake.openaiImages.enqueue({ image: edited });
      const { body } = await callTool('edit_image', {
        imageId: sourceId,
        prompt: 'Make the sky stormy',
        shortDescription: 'Stormy fox',
      });
      expect(body).toMatchObject({ success: true, width: 8, height: 6 });
      const request = fake.openaiImages.requests[1];
      expect(request).toMatchObject({
        path: '/v1/images/edits',
        apiKey: OPENAI_TEST_KEY,
        model: 'gpt-image-1',
      });
      expect(request.body).toMatchObject({
        model: 'gpt-image-1',
        prompt: 'Make the sky stormy',
      });
      expect(request.files).toHaveLength(1);
      expect(request.files?.[0].data.equals(FAKE_PNG)).toBe(true);
      expect(request.files?.[0].contentType).toBe('image/png');

      const info: MediaInfo = (
        await owner.get(`/api/media/${body['mediaId']}/info`).expect(200)
      ).body;
      expect(info).toMatchObject({
        kind: 'edited',
        sourceMediaId: sourceId,
        prompt: 'Make the sky stormy',
        sha256: sha256(edited),
      });
      const file = await owner.get(`/api/media/${body['mediaId']}`).expect(200);
      expect(file.headers['content-length']).toBe(String(edited.length));
    });

    it('edits an image the owner attached, by the attachment id shown next to it', async () => {
      const photo = makePng(5, 4, [200, 30, 30]);
      const attach = async (bytes: Buffer, name: string) =>
        (
          await owner
            .post('/api/attachments')
            .attach('file', bytes, name)
            .expect(201)
        ).body as { id: string };
      const attached = await attach(photo, 'holiday.png');
      const text = await attach(Buffer.from('just words'), 'notes.txt');
      const gif = await attach(Buffer.from('GIF89a...'), 'anim.gif');
      const { url, cookie } = await t.serve();
      fake.openai.enqueue({ text: ['A nice photo.'] });
      const stream = await openSse(
        `${url}/api/chats/${chat.id}/messages`,
        { Cookie: cookie },
        {
          method: 'POST',
          body: { content: 'My photo', attachmentIds: [attached.id] },
        },
      );
      expect(stream.status).toBe(200);
      await stream.rest();
      // The model sees the id next to the image, and in later turns in the note that replaces it.
      expect(JSON.stringify(fake.openai.requests[0].body.messages)).toContain(
        `[Attached image: holiday.png (attachment ${attached.id})]`,
      );

      const edited = makePng(5, 4, [90, 90, 90]);
      fake.openaiImages.enqueue({ image: edited });
      const { body } = await callTool('edit_image', {
        imageId: `/api/attachments/${attached.id}`,
        prompt: 'Black and white',
        shortDescription: 'Holiday in black and white',
      });
      expect(JSON.stringify(fake.openai.requests[1].body.messages)).toContain(
        `[attached: holiday.png (attachment ${attached.id})]`,
      );
      expect(body).toMatchObject({ success: true, width: 5, height: 4 });
      const request = fake.openaiImages.requests[0];
      expect(request).toMatchObject({ path: '/v1/images/edits' });
      expect(request.files?.[0].data.equals(photo)).toBe(true);
      expect(request.files?.[0].contentType).toBe('image/png');
      const info: MediaInfo = (
        await owner.get(`/api/media/${body['mediaId']}/info`).expect(200)
      ).body;
      expect(info).toMatchObject({
        kind: 'edited',
        sourceMediaId: null,
        sourceAttachmentId: attached.id,
        sha256: sha256(edited),
      });

      // Not an image, or a type the image models do not take: a tool error, no model call.
      expect(
        (
          await callTool('edit_image', {
            imageId: text.id,
            prompt: 'x',
            shortDescription: 'x',
          })
        ).tool.error,
      ).toContain('No image with id');
      expect(
        (
          await callTool('edit_image', {
            imageId: gif.id,
            prompt: 'x',
            shortDescription: 'x',
          })
        ).tool.error,
      ).toBe(
        `The attached image ${gif.id} is image/gif; edit_image takes PNG, JPEG or WebP images.`,
      );
      expect(fake.openaiImages.requests).toHaveLength(1);
    });

    it('answers an unknown or malformed image id with a tool error, without calling the model', async () => {
      for (const imageId of [
        '64b7f0c2a1b2c3d4e5f60718',
        'not-an-id',
        '../../etc/passwd',
      ]) {
        const { tool } = await callTool('edit_image', {
          imageId,
          prompt: 'x',
          shortDescription: 'x',
        });
        expect(tool.error).toContain('No image with id');
      }
      expect(fake.openaiImages.requests).toHaveLength(0);
    });

    it('turns provider failures into readable tool errors without the key', async () => {
      fake.openaiImages.enqueue({
        status: 401,
        message: `Incorrect API key provided: ${OPENAI_TEST_KEY}`,
      });
      const auth = await callTool('generate_image', {
        prompt: 'a cat',
        shortDescription: 'Cat',
      });
      expect(auth.tool.error).toBe(
        'Image generation failed: The OpenAI API key was rejected (401).',
      );

      fake.openaiImages.enqueue({ status: 500, message: 'boom' });
      const server = await callTool('generate_image', {
        prompt: 'a cat',
        shortDescription: 'Cat',
      });
      expect(server.tool.error).toBe(
        'Image generation failed: OpenAI had a server error (500).',
      );

      fake.openaiImages.enqueue({
        status: 400,
        message: `Your prompt was rejected (key ${OPENAI_TEST_KEY})`,
      });
      const refused = await callTool('generate_image', {
        prompt: 'a cat',
        shortDescription: 'Cat',
      });
      expect(refused.tool.error).toContain(
        'OpenAI rejected the request (400): Your prompt was rejected',
      );
      expect(refused.tool.error).not.toContain(OPENAI_TEST_KEY);

      fake.openaiImages.enqueue({ noImage: true });
      const empty = await callTool('generate_image', {
        prompt: 'a cat',
        shortDescription: 'Cat',
      });
      expect(empty.tool.error).toBe(
        'Image generation failed: OpenAI answered without image data.',
      );

      fake.openaiImages.enqueue({
        image: Buffer.from('<svg onload=alert(1)>'),
      });
      const notImage = await callTool('generate_image', {
        prompt: 'a cat',
        shortDescription: 'Cat',
      });
      expect(notImage.tool.error).toContain('not a PNG, JPEG or WebP image');
    });

    it('waits for a slow image model longer than LLM_TOOL_TIMEOUT_MS, up to IMAGE_TIMEOUT_MS', async () => {
      fake.openaiImages.enqueue({ delayMs: 600 });
      const { tool, body } = await callTool('generate_image', {
        prompt: 'slowish',
        shortDescription: 'Slowish',
      });
      expect(tool.error).toBeNull();
      expect(body).toMatchObject({ success: true });
    });

    it('gives up after IMAGE_TIMEOUT_MS', async () => {
      fake.openaiImages.enqueue({ delayMs: 3000 });
      const { tool } = await callTool('generate_image', {
        prompt: 'slow',
        shortDescription: 'Slow',
      });
      expect(tool.error).toBe(
        `Image generation failed: OpenAI did not finish the image within 1 s (${new URL(fake.url).host}).`,
      );
    });

    it('asks DALL·E models for base64', async () => {
      await setImageModel('dall-e-3');
      await generate();
      expect(fake.openaiImages.requests[0].body).toMatchObject({
        model: 'dall-e-3',
        response_format: 'b64_json',
      });
      await setImageModel('gpt-image-1');
    });
  });

  describe('with a Gemini image model', () => {
    beforeAll(() => setImageModel('gemini-2.5-flash-image'));
    afterAll(() => setImageModel('gpt-image-1'));

    it('generates and edits through generateContent with image output', async () => {
      const { mediaId, width, height } = await generate(
        'A lighthouse at dusk',
        'Lighthouse',
      );
      expect({ width, height }).toEqual({ width: 4, height: 3 });
      const request = fake.geminiImages.requests[0];
      expect(request).toMatchObject({
        path: '/v1beta/models/gemini-2.5-flash-image:generateContent',
        apiKey: GEMINI_TEST_KEY,
        model: 'gemini-2.5-flash-image',
        stream: false,
      });
      expect(request.body.generationConfig.responseModalities).toEqual([
        'IMAGE',
        'TEXT',
      ]);
      expect(request.body.contents).toEqual([
        { role: 'user', parts: [{ text: 'A lighthouse at dusk' }] },
      ]);
      expect(fake.gemini.requests).toHaveLength(0);

      const jpegLike = makePng(2, 5);
      fake.geminiImages.enqueue({
        text: 'Here is your edit.',
        image: jpegLike,
      });
      const { body } = await callTool('edit_image', {
        imageId: mediaId,
        prompt: 'Add a moon',
        shortDescription: 'Lighthouse with moon',
      });
      expect(body).toMatchObject({ success: true, width: 2, height: 5 });
      const edit = fake.geminiImages.requests[1];
      expect(edit.body.contents[0].parts).toEqual([
        {
          inlineData: {
            mimeType: 'image/png',
            data: FAKE_PNG.toString('base64'),
          },
        },
        { text: 'Add a moon' },
      ]);
    });

    it('reports a refusal without image, and a rejected key, readably', async () => {
      fake.geminiImages.enqueue({
        noImage: true,
        text: 'I cannot draw that.',
        finishReason: 'IMAGE_SAFETY',
      });
      const refused = await callTool('generate_image', {
        prompt: 'x',
        shortDescription: 'x',
      });
      expect(refused.tool.error).toBe(
        'Image generation failed: Gemini answered without an image (IMAGE_SAFETY): I cannot draw that.',
      );

      fake.geminiImages.enqueue({
        status: 403,
        message: `Permission denied for ${GEMINI_TEST_KEY}`,
      });
      const denied = await callTool('generate_image', {
        prompt: 'x',
        shortDescription: 'x',
      });
      expect(denied.tool.error).toBe(
        'Image generation failed: The Gemini API key was rejected (403).',
      );
      expect(denied.tool.error).not.toContain(GEMINI_TEST_KEY);
    });
  });

  describe('availability', () => {
    it('offers no image tools without an image model, nor to cron, Pulse or auto-reply turns', async () => {
      const registry = t.app.get(AiToolRegistry);
      const settings = t.app.get(SettingsService);
      const names = async (source: 'chat' | 'cron' | 'pulse' | 'auto-reply') =>
        (await registry.specs({ source, settings: await settings.get() })).map(
          (s) => s.name,
        );

      await setImageModel('gpt-image-1');
      expect(await names('chat')).toEqual(
        expect.arrayContaining(['generate_image', 'edit_image']),
      );
      for (const source of ['cron', 'pulse', 'auto-reply'] as const) {
        expect(await names(source)).not.toContain('generate_image');
        expect(await names(source)).not.toContain('edit_image');
      }

      await setImageModel(null);
      expect(await names('chat')).not.toContain('generate_image');
      fake.openai.enqueue({ text: ['Hi'] });
      await client.send(chat.id, 'hello');
      const tools = fake.openai.requests[0].body.tools.map(
        (x: { function: { name: string } }) => x.function.name,
      );
      expect(tools).not.toContain('generate_image');
      expect(tools).not.toContain('edit_image');
      expect(fake.openai.requests[0].body.messages[0].content).not.toContain(
        'generate_image',
      );
      await setImageModel('gpt-image-1');
    });
  });

  describe('GET /api/media/:id', () => {
    it('answers 404 for unknown, malformed and traversal ids', async () => {
      for (const path of [
        '/api/media/64b7f0c2a1b2c3d4e5f60718',
        '/api/media/64b7f0c2a1b2c3d4e5f60718/info',
        '/api/media/not-an-id',
        '/api/media/..%2F..%2F..%2Fetc%2Fpasswd',
        '/api/media/%2e%2e%2f%2e%2e%2fconfig',
        '/api/media/..%5C..%5Cwindows',
        '/api/media/../../etc/passwd',
        `/api/media/${sha256(FAKE_PNG)}.png`,
        `/api/media/${sha256(FAKE_PNG)}`,
      ]) {
        const res = await owner.get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.headers['content-type']).not.toMatch(/^image\//);
      }
    });

    it('answers 404 when the file behind a record is gone', async () => {
      const { mediaId } = await generate('lost', 'Lost');
      const hash = sha256(FAKE_PNG);
      rmSync(join(mediaDir(), `${hash}.png`));
      await owner.get(`/api/media/${mediaId}`).expect(404);
      expect(readImageInfo(FAKE_PNG)).toEqual({
        mime: 'image/png',
        width: 4,
        height: 3,
      });
    });
  });
});
