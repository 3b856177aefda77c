import type { Content, Part } from '@google/genai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import type { ToolCallRecord } from '@metatronos/shared-types';
import type { LlmAttachment, LlmHistoryMessage } from '../llm-adapter';
import { openAiUserContent } from './attachment-parts';

/** One model call of an earlier assistant reply: the text it wrote, then the tools it called. */
interface ReplySegment {
  text: string;
  calls: ToolCallRecord[];
}

/** Splits an assistant reply into model calls: text that follows tool calls starts the next call. */
function segmentsOf(
  parts: LlmHistoryMessage & { role: 'assistant' },
): ReplySegment[] {
  const segments: ReplySegment[] = [];
  let current: ReplySegment = { text: '', calls: [] };
  for (const part of parts.parts) {
    if (part.type === 'text') {
      if (!part.text) continue;
      if (current.calls.length) {
        segments.push(current);
        current = { text: '', calls: [] };
      }
      current.text += part.text;
    } else {
      current.calls.push(part);
    }
  }
  if (current.text || current.calls.length) segments.push(current);
  return segments;
}

/** The JSON string the model got for a stored call (an error object when the call never finished). */
export function toolResultText(call: ToolCallRecord): string {
  if (call.result !== null) return call.result;
  return JSON.stringify({
    error: call.error ?? 'The tool call did not finish.',
  });
}

// ---------------------------------------------------------------- OpenAI

/**
 * OpenAI chat messages for a turn: the system prompt (when set), the history, the new user message.
 * An assistant reply becomes `assistant` (text + `tool_calls`) and one `tool` message per call for
 * each model call it made, then an `assistant` message with the trailing text.
 */
export function toOpenAiMessages(
  systemPrompt: string | null,
  history: LlmHistoryMessage[],
  userMessage: string,
  attachments: readonly LlmAttachment[] = [],
  /** OpenAI's own API reads PDFs; compatible endpoints get a note instead. */
  pdfInline = false,
): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  if (systemPrompt !== null)
    messages.push({ role: 'system', content: systemPrompt });
  for (const entry of history) {
    if (entry.role === 'user') {
      messages.push({ role: 'user', content: entry.text });
      continue;
    }
    for (const segment of segmentsOf(entry)) {
      if (!segment.calls.length) {
        messages.push({ role: 'assistant', content: segment.text });
        continue;
      }
      const toolCalls: ChatCompletionMessageToolCall[] = segment.calls.map(
        (call) => ({
          id: call.id,
          type: 'function',
          function: {
            name: call.name,
            arguments: JSON.stringify(call.arguments ?? {}),
          },
        }),
      );
      messages.push({
        role: 'assistant',
        content: segment.text || null,
        tool_calls: toolCalls,
      });
      for (const call of segment.calls) {
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: toolResultText(call),
        });
      }
    }
  }
  messages.push({
    role: 'user',
    content: openAiUserContent(userMessage, attachments, { pdfInline }),
  });
  return messages;
}

// ---------------------------------------------------------------- Gemini

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A tool's JSON string as a Gemini `functionResponse.response` (a JSON object / Struct):
 * objects as they are, arrays as `{ data: [...] }`, other JSON values and non-JSON text as `{ result }`.
 */
export function toGeminiFunctionResponse(
  result: string,
): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    return { result };
  }
  if (Array.isArray(parsed)) return { data: parsed };
  if (isPlainObject(parsed)) return parsed;
  return { result: parsed };
}

/**
 * Gemini contents for the history. An assistant reply becomes, per model call, a `model` content
 * (text + `functionCall` parts) and a `user` content with the `functionResponse` parts, then a
 * `model` content with the trailing text. Consecutive contents of one role are merged, so the
 * history alternates (e.g. a reply that ended on tool calls, followed by the next user message).
 * Stored call ids are not replayed: Gemini matches responses to calls by name and order.
 */
export function toGeminiHistory(history: LlmHistoryMessage[]): Content[] {
  const contents: Content[] = [];
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (!parts.length) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role)
      last.parts = [...(last.parts ?? []), ...parts];
    else contents.push({ role, parts });
  };
  for (const entry of history) {
    if (entry.role === 'user') {
      push('user', [{ text: entry.text }]);
      continue;
    }
    for (const segment of segmentsOf(entry)) {
      const modelParts: Part[] = [];
      if (segment.text) modelParts.push({ text: segment.text });
      for (const call of segment.calls)
        modelParts.push({
          functionCall: { name: call.name, args: call.arguments ?? {} },
        });
      push('model', modelParts);
      push(
        'user',
        segment.calls.map((call) => ({
          functionResponse: {
            name: call.name,
            response: toGeminiFunctionResponse(toolResultText(call)),
          },
        })),
      );
    }
  }
  return contents;
}
