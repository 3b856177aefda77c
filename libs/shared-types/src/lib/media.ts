/** How an image in the `media` collection came to be. */
export const MEDIA_KINDS = ['generated', 'edited'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Image types the media store keeps (what image models return). */
export const MEDIA_MIMES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type MediaMime = (typeof MEDIA_MIMES)[number];

/** `GET /api/media/:id/info`: one stored image, without its bytes (those are at `url`). */
export interface MediaInfo {
  id: string;
  /** The chat and assistant message that made it (null when made outside a chat). */
  chatId: string | null;
  messageId: string | null;
  kind: MediaKind;
  prompt: string;
  shortDescription: string;
  /** The configured image model id that made it (e.g. `gpt-image-1`, `gemini-2.5-flash-image`). */
  model: string;
  mime: MediaMime;
  /** Bytes. */
  size: number;
  width: number;
  height: number;
  /** SHA-256 of the bytes (hex); also the file name on disk and the HTTP ETag. */
  sha256: string;
  /** For an edit: the image it was made from. */
  sourceMediaId: string | null;
  /** For an edit of an image the owner attached: that attachment. */
  sourceAttachmentId: string | null;
  /** `/api/media/<id>` */
  url: string;
  createdAt: string;
}

/** What generate_image / edit_image answer the model on success (a JSON string). */
export interface ImageToolResult {
  success: true;
  mediaId: string;
  url: string;
  /** `![<shortDescription>](/api/media/<id>)`: the model is told to put it in its reply. */
  markdown: string;
  width: number;
  height: number;
}

/** The tools that produce images, whose results the console shows as pictures. */
export const IMAGE_TOOL_NAMES = ['generate_image', 'edit_image'] as const;

/** Longest prompt and short description the image tools accept. */
export const IMAGE_PROMPT_MAX_LENGTH = 4000;
export const IMAGE_SHORT_DESCRIPTION_MAX_LENGTH = 200;
