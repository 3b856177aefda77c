import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { decodeParts } from './stored-parts';
import type { ChatMessage, ChatSummary } from '@metatronos/shared-types';
import type { ChatRecord } from './schemas/chat.schema';
import type { MessageRecord } from './schemas/message.schema';

export function toChatSummary(chat: ChatRecord, running: boolean): ChatSummary {
  return {
    id: chat._id.toHexString(),
    title: chat.title,
    pinned: chat.pinned === true,
    archived: chat.archived === true,
    model: chat.model ?? null,
    kind: chat.kind ?? 'chat',
    createdAt: chat.createdAt.toISOString(),
    updatedAt: chat.updatedAt.toISOString(),
    running,
    mode: chat.mode ?? DEFAULT_MODE,
    accountId: chat.accountId ?? null,
  };
}

export function toChatMessage(message: MessageRecord): ChatMessage {
  const view: ChatMessage = {
    id: message._id.toHexString(),
    chatId: message.chatId.toHexString(),
    role: message.role,
    content: message.content,
    status: message.status,
    createdAt: message.createdAt.toISOString(),
    updatedAt: message.updatedAt.toISOString(),
  };
  if (message.attachments?.length)
    view.attachments = message.attachments.map((a) => ({ ...a }));
  if (message.role === 'user' && message.author)
    view.author = { ...message.author };
  if (message.role === 'user' && message.trigger)
    view.trigger = message.trigger;
  if (message.role === 'assistant') {
    view.parts = decodeParts(message.parts);
    view.error = message.error ?? null;
    view.model = message.model ?? null;
    view.usage = message.usage ?? null;
    if (message.delivery) view.delivery = { ...message.delivery };
    if (message.taint?.length)
      view.taint = message.taint.map((m) => ({ ...m }));
  }
  return view;
}
