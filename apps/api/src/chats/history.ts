import type { AssistantPart } from '@metatronos/shared-types';
import type { LlmHistoryMessage } from '../llm/llm-adapter';
import type { MessageRecord } from './schemas/message.schema';

const INTERRUPTED = JSON.stringify({
  error: 'This tool call was interrupted before it finished.',
});

/**
 * Stored messages (oldest first) → provider-neutral history. Empty replies are
 * skipped, consecutive user messages merged (a failed reply leaves two in a row),
 * and the history starts with a user turn, as providers expect.
 */
export function toLlmHistory(messages: MessageRecord[]): LlmHistoryMessage[] {
  const history: LlmHistoryMessage[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      const last = history[history.length - 1];
      if (last?.role === 'user')
        last.text = `${last.text}\n\n${message.content}`;
      else history.push({ role: 'user', text: message.content });
      continue;
    }
    const parts: AssistantPart[] = (message.parts ?? [])
      .filter((part) => part.type !== 'text' || part.text !== '')
      .map((part) =>
        part.type === 'tool_call' && part.result === null
          ? { ...part, result: INTERRUPTED }
          : part,
      );
    if (parts.length === 0 || history.length === 0) continue;
    history.push({ role: 'assistant', parts });
  }
  return history;
}
