import type {
  AssistantPart,
  ChatMessage,
  ToolCallRecord,
} from '@metatronos/shared-types';
import type { ChatStreamEvent } from './chat-stream';

/** The assistant reply being streamed right now, built from the stream's events. */
export interface LiveReply {
  /** Text and tool calls in the order they happened, like a stored message's `parts`. */
  parts: AssistantPart[];
  /** The stream's `error` event, or a lost connection. Partial text stays. */
  error: string | null;
  /** `done` or `error` arrived (or the stream ended). */
  finished: boolean;
  stopped: boolean;
  /** The stored reply's id from `done` / `error`; null when nothing was stored (yet). */
  messageId: string | null;
}

export const NEW_REPLY: LiveReply = {
  parts: [],
  error: null,
  finished: false,
  stopped: false,
  messageId: null,
};

/** The reply after one stream event; `message` (the stored user message) does not change it. */
export function applyReplyEvent(
  reply: LiveReply,
  event: ChatStreamEvent,
): LiveReply {
  switch (event.type) {
    case 'delta': {
      if (!event.data.text) return reply;
      const last = reply.parts.at(-1);
      const parts =
        last?.type === 'text'
          ? [
              ...reply.parts.slice(0, -1),
              { type: 'text' as const, text: last.text + event.data.text },
            ]
          : [...reply.parts, { type: 'text' as const, text: event.data.text }];
      return { ...reply, parts };
    }
    case 'tool_call': {
      const call: ToolCallRecord = {
        id: event.data.id,
        name: event.data.name,
        arguments: event.data.arguments ?? {},
        result: null,
        error: null,
        durationMs: null,
      };
      return {
        ...reply,
        parts: [...reply.parts, { type: 'tool_call', ...call }],
      };
    }
    case 'tool_result': {
      const { id, result, durationMs, error, taint, pendingActionId } =
        event.data;
      const parts = reply.parts.map((part) =>
        part.type === 'tool_call' && part.id === id
          ? {
              ...part,
              result,
              durationMs,
              error: error ?? null,
              taint: taint ?? null,
              pendingActionId: pendingActionId ?? null,
            }
          : part,
      );
      return { ...reply, parts };
    }
    case 'mode':
      return {
        ...reply,
        parts: [
          ...reply.parts,
          { type: 'mode', mode: event.data.mode, by: event.data.by },
        ],
      };
    case 'done':
      return {
        ...reply,
        finished: true,
        stopped: event.data.stopped === true,
        messageId: event.data.messageId,
      };
    case 'error':
      return {
        ...reply,
        finished: true,
        error: event.data.message,
        messageId: event.data.messageId ?? null,
      };
    case 'message':
      return reply;
  }
}

/** What the message view draws: a stored message, or the live reply dressed as one. */
export type MessageView = Pick<
  ChatMessage,
  'id' | 'role' | 'content' | 'status'
> &
  Partial<
    Pick<ChatMessage, 'parts' | 'error' | 'model' | 'delivery' | 'taint'>
  >;

export const LIVE_REPLY_ID = 'live-reply';

export function liveReplyView(reply: LiveReply): MessageView {
  return {
    id: LIVE_REPLY_ID,
    role: 'assistant',
    content: reply.parts
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join(''),
    parts: reply.parts,
    status: reply.error
      ? 'error'
      : reply.stopped
        ? 'stopped'
        : reply.finished
          ? 'complete'
          : 'streaming',
    error: reply.error,
  };
}

/** An assistant message's parts; older or text-only messages have none, so their content is one text part. */
export function partsOf(message: MessageView): AssistantPart[] {
  if (message.parts && message.parts.length > 0) return message.parts;
  return message.content ? [{ type: 'text', text: message.content }] : [];
}
