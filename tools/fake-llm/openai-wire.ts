/** The OpenAI chat-completions wire format: streamed chunks, JSON completions and error bodies. */
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

function argumentsString(call: FakeToolCall): string {
  if (typeof call.arguments === 'string') return call.arguments;
  return JSON.stringify(call.arguments ?? {});
}

/** Splits a string into up to `n` pieces (how the real API streams tool arguments). */
function splitInPieces(value: string, n: number): string[] {
  if (value.length <= 1) return [value];
  const size = Math.ceil(value.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size)
    pieces.push(value.slice(i, i + size));
  return pieces;
}

const OPENAI_ERROR_TYPES: Record<
  number,
  { type: string; code: string | null }
> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: {
    type: 'invalid_request_error',
    code: 'unsupported_country_region_territory',
  },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

export function openAiError(res: ServerResponse, reply: FakeErrorReply): void {
  const kind = OPENAI_ERROR_TYPES[reply.status] ?? {
    type: 'server_error',
    code: null,
  };
  sendJson(
    res,
    reply.status,
    {
      error: {
        message: reply.message,
        type: kind.type,
        param: null,
        code: kind.code,
      },
    },
    reply.retryAfter ? { 'retry-after': reply.retryAfter } : {},
  );
}

/** Answers a chat completion: SSE chunks when `stream`, else one JSON completion. */
export async function answerOpenAi(
  req: FakeRecordedRequest,
  reply: FakeReply,
  res: ServerResponse,
): Promise<void> {
  if (isErrorReply(reply)) return openAiError(res, reply);
  if (reply.reset) {
    res.socket?.destroy();
    return;
  }

  const id = randomId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const model = req.model || 'gpt-fake';
  const usage = reply.usage ?? DEFAULT_USAGE;
  const usageBody = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens !== undefined
      ? { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }
      : {}),
  };
  const calls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? randomId('call_'),
    name: call.name,
    args: argumentsString(call),
  }));
  const text = reply.text ?? [];
  const finishReason =
    reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop');

  if (!req.stream) {
    const content = text.join('');
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: content || (calls.length ? null : ''),
            refusal: null,
            ...(calls.length
              ? {
                  tool_calls: calls.map((c) => ({
                    id: c.id,
                    type: 'function',
                    function: { name: c.name, arguments: c.args },
                  })),
                }
              : {}),
          },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage: usageBody,
    });
    return;
  }

  const includeUsage = req.body?.stream_options?.include_usage === true;
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
  ) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;

  // The scripted pieces (counted by `cutAfter`): text deltas, then each call's header and argument fragments.
  const pieces: string[] = text.map((t) => chunk({ content: t }));
  calls.forEach((call, index) => {
    pieces.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const fragment of splitInPieces(call.args, 3)) {
      pieces.push(
        chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
      );
    }
  });

  startSse(res);
  const writer = new ChunkWriter(res);
  await writer.write(chunk({ role: 'assistant', content: '', refusal: null }));
  for (let i = 0; i < pieces.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter)
      return writer.cut();
    if (reply.stallAfter !== undefined && i >= reply.stallAfter)
      return writer.stall();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    await writer.write(pieces[i]);
  }
  if (reply.cutAfter !== undefined && reply.cutAfter <= pieces.length)
    return writer.cut();
  if (reply.stallAfter !== undefined) return writer.stall();
  await writer.sleep(reply.chunkDelayMs ?? 0);
  if (writer.gone) return;
  await writer.write(chunk({}, finishReason));
  if (includeUsage) {
    await writer.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage: usageBody })}\n\n`,
    );
  }
  await writer.write('data: [DONE]\n\n');
  res.end();
}
