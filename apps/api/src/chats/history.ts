import { decodeParts } from './stored-parts';
import type { TextPart, ToolCallPart } from '@metatronos/shared-types';
import type { LlmHistoryMessage } from '../llm/llm-adapter';
import type { MessageRecord } from './schemas/message.schema';
import { asContactText } from './contact-chat';

export interface HistoryOptions {
  /** Label each contact's message as the contact's untrusted words (the owner's turn in a contact's chat). */
  markContacts?: boolean;
}

/**
 * Stored messages (oldest first) → provider-neutral history. Empty replies are
 * skipped, consecutive user messages merged (a failed reply leaves two in a row),
 * and the history starts with a user turn, as providers expect.
 */
export function toLlmHistory(
  messages: MessageRecord[],
  options: HistoryOptions = {},
): LlmHistoryMessage[] {
  const history: LlmHistoryMessage[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      const text =
        options.markContacts && message.author
          ? asContactText(message.author, withAttachmentNotes(message))
          : withAttachmentNotes(message);
      const last = history[history.length - 1];
      if (last?.role === 'user') last.text = `${last.text}\n\n${text}`;
      else history.push({ role: 'user', text });
      continue;
    }
    // A call that never finished (result null) is given to the model as an error by the adapters (toolResultText).
    // Mode switches are the console's; the model learns its mode from the tools it is offered.
    const parts = modelParts(message);
    if (parts.length === 0 || history.length === 0) continue;
    history.push({ role: 'assistant', parts });
  }
  return history;
}

/**
 * A stored reply's parts are never changed in place (a write stores a new array), so they are
 * decoded once: every later turn gets the same array, which nothing downstream changes either
 * (the adapters only read it; the budget sizes it once).
 */
const decoded = new WeakMap<object, (TextPart | ToolCallPart)[]>();

function modelParts(message: MessageRecord): (TextPart | ToolCallPart)[] {
  const stored = message.parts;
  let parts = stored ? decoded.get(stored) : undefined;
  if (!parts) {
    parts = decodeParts(stored).filter(
      (part): part is TextPart | ToolCallPart =>
        part.type === 'tool_call' || (part.type === 'text' && part.text !== ''),
    );
    if (stored) decoded.set(stored, parts);
  }
  return parts;
}

/** Files are given to the model with their own turn only; later turns keep a note of what was attached (images with their id, for edit_image). */
function withAttachmentNotes(message: MessageRecord): string {
  const notes = (message.attachments ?? []).map((a) =>
    a.kind === 'image'
      ? `[attached: ${a.name} (attachment ${a.id})]`
      : `[attached: ${a.name}]`,
  );
  return notes.length
    ? `${message.content}\n${notes.join('\n')}`
    : message.content;
}
