import type { Part } from '@google/genai';
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import type { LlmAttachment } from '../llm-adapter';

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A text file as the model reads it: between markers naming the file, with a note when it was cut. */
function textBlock(file: LlmAttachment & { kind: 'text' }): string {
  const cut = file.truncated
    ? `\n[Only the first ${sizeText(Buffer.byteLength(file.text))} of ${sizeText(file.size)} are included.]`
    : '';
  return `--- Attached file: ${file.name} (${file.mime}) ---\n${file.text}${cut}\n--- End of ${file.name} ---`;
}

/**
 * The text of the user turn: the message, then one block per attachment. Text files are given
 * whole (capped); images and PDFs sent inline get a one-line note so the model knows their names;
 * a PDF this provider cannot read, and a file that could not be read, are explained.
 */
export function userTurnText(
  userMessage: string,
  attachments: readonly LlmAttachment[],
  pdfInline: boolean,
): string {
  const blocks = attachments.map((file) => {
    switch (file.kind) {
      case 'text':
        return textBlock(file);
      case 'image':
        return file.id
          ? `[Attached image: ${file.name} (attachment ${file.id})]`
          : `[Attached image: ${file.name}]`;
      case 'pdf':
        return pdfInline
          ? `[Attached PDF: ${file.name}]`
          : `[Attached PDF: ${file.name} (${sizeText(file.size)}). This model cannot read PDF files here, so its content is not included: ask the owner to paste the text, or to use an OpenAI or Gemini model.]`;
      default:
        return `[Attached file: ${file.name}. It could not be read on the server, so its content is not included.]`;
    }
  });
  return [userMessage, ...blocks].join('\n\n');
}

/**
 * OpenAI (and compatible endpoints): a plain string without attachments; otherwise a text part
 * (message + text files + notes) followed by one `image_url` part per image, as a `data:` URL.
 * PDFs go as `file` parts (`file_data` data URL) only with `pdfInline`: OpenAI's own API reads
 * them, but the chat completions of compatible endpoints (Ollama, LM Studio…) do not take them.
 */
export function openAiUserContent(
  userMessage: string,
  attachments: readonly LlmAttachment[],
  { pdfInline = false }: { pdfInline?: boolean } = {},
): string | ChatCompletionContentPart[] {
  if (attachments.length === 0) return userMessage;
  const parts: ChatCompletionContentPart[] = [
    { type: 'text', text: userTurnText(userMessage, attachments, pdfInline) },
  ];
  for (const file of attachments) {
    if (file.kind === 'image')
      parts.push({
        type: 'image_url',
        image_url: {
          url: `data:${file.mime};base64,${file.data.toString('base64')}`,
        },
      });
    else if (file.kind === 'pdf' && pdfInline)
      parts.push({
        type: 'file',
        file: {
          filename: file.name,
          file_data: `data:${file.mime};base64,${file.data.toString('base64')}`,
        },
      });
  }
  return parts;
}

/** Gemini: a text part (message + text files + notes), then images and PDFs as `inlineData`. */
export function geminiUserParts(
  userMessage: string,
  attachments: readonly LlmAttachment[] = [],
): Part[] {
  const parts: Part[] = [
    { text: userTurnText(userMessage, attachments, true) },
  ];
  for (const file of attachments) {
    if (file.kind === 'image' || file.kind === 'pdf')
      parts.push({
        inlineData: { mimeType: file.mime, data: file.data.toString('base64') },
      });
  }
  return parts;
}
