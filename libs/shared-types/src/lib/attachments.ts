/** What an attachment is, as far as the model is concerned. */
export const ATTACHMENT_KINDS = ['image', 'text', 'pdf'] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];

/** The answer to `POST /api/attachments` (multipart, one field `file`). */
export interface UploadedAttachment {
  id: string;
  /** The client's file name, sanitised; display text only. */
  name: string;
  mime: string;
  /** Bytes. */
  size: number;
}

/** An attachment as a message carries it (`ChatMessage.attachments`). */
export interface MessageAttachment extends UploadedAttachment {
  kind: AttachmentKind;
}

/** At most this many attachments go with one message. */
export const MAX_ATTACHMENTS_PER_MESSAGE = 10;

/** File types the server accepts (it also checks the content): for file pickers' `accept`. */
export const ATTACHMENT_ACCEPT =
  '.png,.jpg,.jpeg,.gif,.webp,.txt,.md,.markdown,.csv,.json,.pdf';

/** `GET /api/attachments/:id`: the file itself. */
export function attachmentUrl(id: string): string {
  return `/api/attachments/${encodeURIComponent(id)}`;
}
