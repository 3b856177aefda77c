import type {
  AssistantPart,
  ChatMessage,
  ChatSummary,
} from '@metatronos/shared-types';

/** Test data for the chat specs. */
export function chatSummary(
  id: string,
  title: string,
  extra: Partial<ChatSummary> = {},
): ChatSummary {
  return {
    id,
    title,
    pinned: false,
    archived: false,
    model: null,
    kind: 'chat',
    createdAt: '2026-01-01T10:00:00.000Z',
    updatedAt: '2026-01-01T10:00:00.000Z',
    running: false,
    mode: 'default',
    accountId: null,
    ...extra,
  };
}

let clock = Date.parse('2026-01-01T10:00:00.000Z');

export function userMessage(
  id: string,
  content: string,
  chatId = 'c1',
): ChatMessage {
  const at = new Date((clock += 1000)).toISOString();
  return {
    id,
    chatId,
    role: 'user',
    content,
    status: 'complete',
    createdAt: at,
    updatedAt: at,
  };
}

export function assistantMessage(
  id: string,
  content: string,
  extra: Partial<ChatMessage> = {},
  chatId = 'c1',
): ChatMessage {
  const at = new Date((clock += 1000)).toISOString();
  const parts: AssistantPart[] = [{ type: 'text', text: content }];
  return {
    id,
    chatId,
    role: 'assistant',
    content,
    parts,
    status: 'complete',
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

/** `count` alternating messages m1…m<count>, oldest first. */
export function conversation(count: number, prefix = 'm'): ChatMessage[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? userMessage(`${prefix}${i + 1}`, `question ${i + 1}`)
      : assistantMessage(`${prefix}${i + 1}`, `answer ${i + 1}`),
  );
}
