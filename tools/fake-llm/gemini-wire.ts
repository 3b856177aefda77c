/** The Gemini `generateContent` wire format: SSE and JSON responses, error bodies, image requests. */
import type { ServerResponse } from 'node:http';
import { ChunkWriter, randomId, sendJson, startSse } from './http-replies';
import {
  DEFAULT_USAGE,
  isErrorReply,
  type FakeErrorReply,
  type FakeRecordedRequest,
  type FakeReply,
  type FakeToolCall,
} from './scripts';

function argumentsObject(call: FakeToolCall): Record<string, unknown> {
  if (typeof call.arguments !== 'string') return call.arguments ?? {};
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiError(res: ServerResponse, reply: FakeErrorReply): void {
  sendJson(res, reply.status, {
    error: {
      code: reply.status,
      message: reply.message,
      status: GEMINI_STATUS[reply.status] ?? 'UNKNOWN',
      // Gemini names the wait in the body (google.rpc.RetryInfo), not in a header.
      ...(reply.retryAfter
        ? {
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.RetryInfo',
                retryDelay: `${reply.retryAfter}s`,
              },
            ],
          }
        : {}),
    },
  });
}

interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown>; id?: string };
}

/** Answers `streamGenerateContent` (SSE) or `generateContent` (JSON). */
export async function answerGemini(
  req: FakeRecordedRequest,
  reply: FakeReply,
  res: ServerResponse,
): Promise<void> {
  if (isErrorReply(reply)) return geminiError(res, reply);
  if (reply.reset) {
    res.socket?.destroy();
    return;
  }

  const usage = reply.usage ?? DEFAULT_USAGE;
  const modelVersion = req.model || 'gemini-fake';
  const responseId = randomId('resp-');
  const finishReason = reply.finishReason ?? 'STOP';
  const usageMetadata = (final: boolean) => ({
    promptTokenCount: usage.promptTokens,
    ...(usage.cachedTokens !== undefined
      ? { cachedContentTokenCount: usage.cachedTokens }
      : {}),
    ...(final ? { candidatesTokenCount: usage.completionTokens } : {}),
    totalTokenCount: usage.promptTokens + (final ? usage.completionTokens : 0),
  });
  const functionParts: GeminiPart[] = (reply.toolCalls ?? []).map((call) => ({
    functionCall: {
      name: call.name,
      args: argumentsObject(call),
      ...(call.id ? { id: call.id } : {}),
    },
  }));
  const textParts: GeminiPart[] = (reply.text ?? []).map((text) => ({ text }));
  const body = (parts: GeminiPart[], final: boolean) => ({
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(final ? { finishReason } : {}),
        index: 0,
      },
    ],
    usageMetadata: usageMetadata(final),
    modelVersion,
    responseId,
  });

  if (!req.stream) {
    const merged: GeminiPart[] = [];
    const text = (reply.text ?? []).join('');
    if (text) merged.push({ text });
    merged.push(...functionParts);
    sendJson(res, 200, body(merged, true));
    return;
  }

  // The scripted pieces: one chunk per text piece, then all function calls in one chunk (as Gemini does).
  const chunks: GeminiPart[][] = textParts.map((part) => [part]);
  if (functionParts.length) chunks.push(functionParts);
  if (!chunks.length) chunks.push([{ text: '' }]);

  startSse(res);
  const writer = new ChunkWriter(res);
  for (let i = 0; i < chunks.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter)
      return writer.cut();
    if (reply.stallAfter !== undefined && i >= reply.stallAfter)
      return writer.stall();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    const final =
      i === chunks.length - 1 &&
      reply.cutAfter === undefined &&
      reply.stallAfter === undefined;
    await writer.write(
      `data: ${JSON.stringify(body(chunks[i], final))}\r\n\r\n`,
    );
  }
  if (reply.cutAfter !== undefined) return writer.cut();
  if (reply.stallAfter !== undefined) return writer.stall();
  res.end();
}

/** A `generateContent` request asking for image output (`responseModalities` holds `IMAGE`). */
export function wantsImage(body: unknown): boolean {
  const modalities = (
    body as { generationConfig?: { responseModalities?: unknown } } | undefined
  )?.generationConfig?.responseModalities;
  return (
    Array.isArray(modalities) &&
    modalities.some((m) => String(m).toUpperCase() === 'IMAGE')
  );
}
