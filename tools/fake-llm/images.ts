/** The image endpoints: OpenAI generations/edits and Gemini image output, answered with real PNGs. */
import type { ServerResponse } from 'node:http';
import { PNG } from 'pngjs';
import { geminiError } from './gemini-wire';
import { clientGone, pause, randomId, sendJson } from './http-replies';
import { openAiError } from './openai-wire';
import {
  isErrorReply,
  type FakeImageErrorReply,
  type FakeImageReply,
  type FakeRecordedRequest,
} from './scripts';

/** A real RGB PNG of `width`×`height` filled with `rgb` (decodable by any viewer). */
export function makePng(
  width: number,
  height: number,
  rgb: [number, number, number] = [200, 60, 30],
): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = rgb[0];
    png.data[i + 1] = rgb[1];
    png.data[i + 2] = rgb[2];
    png.data[i + 3] = 255;
  }
  return PNG.sync.write(png, { colorType: 2 });
}

/** The default image reply: a 4×3 PNG. */
export const FAKE_PNG = makePng(4, 3);

export async function answerOpenAiImage(
  reply: FakeImageReply | FakeImageErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return openAiError(res, reply);
  const image = reply.image ?? FAKE_PNG;
  sendJson(res, 200, {
    created: Math.floor(Date.now() / 1000),
    data: reply.noImage ? [] : [{ b64_json: image.toString('base64') }],
    usage: { input_tokens: 10, output_tokens: 20, total_tokens: 30 },
  });
}

export async function answerGeminiImage(
  req: FakeRecordedRequest,
  reply: FakeImageReply | FakeImageErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return geminiError(res, reply);
  const parts: Array<Record<string, unknown>> = [];
  if (reply.text) parts.push({ text: reply.text });
  if (!reply.noImage) {
    parts.push({
      inlineData: {
        mimeType: reply.mimeType ?? 'image/png',
        data: (reply.image ?? FAKE_PNG).toString('base64'),
      },
    });
  }
  sendJson(res, 200, {
    candidates: [
      {
        content: { parts, role: 'model' },
        finishReason: reply.finishReason ?? 'STOP',
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: 10,
      candidatesTokenCount: 20,
      totalTokenCount: 30,
    },
    modelVersion: req.model || 'gemini-fake-image',
    responseId: randomId('resp-'),
  });
}
