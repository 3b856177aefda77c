import type { AttachmentKind } from '@metatronos/shared-types';

export interface AttachmentType {
  kind: AttachmentKind;
  mime: string;
}

/** Bytes read before the type is decided (the longest signature checked is 12 bytes). */
export const SNIFF_BYTES = 16;

const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'jfif', 'gif', 'webp']);
const TEXT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
};

export const ALLOWED_TYPES_TEXT =
  'PNG, JPEG, GIF and WebP images, PDF, and UTF-8 text files (.txt, .md, .csv, .json)';

function startsWith(
  head: Buffer,
  signature: number[] | string,
  at = 0,
): boolean {
  const bytes =
    typeof signature === 'string'
      ? Buffer.from(signature, 'latin1')
      : Buffer.from(signature);
  return (
    head.length >= at + bytes.length &&
    head.subarray(at, at + bytes.length).equals(bytes)
  );
}

/** The binary formats recognised by their first bytes. */
function sniffBinary(head: Buffer): AttachmentType | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    return { kind: 'image', mime: 'image/png' };
  if (startsWith(head, [0xff, 0xd8, 0xff]))
    return { kind: 'image', mime: 'image/jpeg' };
  if (startsWith(head, 'GIF87a') || startsWith(head, 'GIF89a'))
    return { kind: 'image', mime: 'image/gif' };
  if (startsWith(head, 'RIFF') && startsWith(head, 'WEBP', 8))
    return { kind: 'image', mime: 'image/webp' };
  if (startsWith(head, '%PDF-'))
    return { kind: 'pdf', mime: 'application/pdf' };
  return null;
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/**
 * Decides the type from the first bytes and the file name's extension, or returns why it is refused.
 * Images and PDF are recognised by their signature (the extension must be of the same family: a PNG
 * named `.jpg` is served as the PNG it is); text files need a text extension, and their content is
 * checked as it streams (UTF-8, no NUL bytes, see TextCheck).
 */
export function decideType(
  head: Buffer,
  fileName: string,
): AttachmentType | string {
  const extension = extensionOf(fileName);
  const binary = sniffBinary(head);
  if (binary) {
    const fits =
      binary.kind === 'image'
        ? IMAGE_EXTENSIONS.has(extension)
        : extension === 'pdf';
    if (fits || extension === '') return binary;
    return `The file's content (${binary.mime}) does not match its name (.${extension}).`;
  }
  const textMime = TEXT_TYPES[extension];
  if (textMime) return { kind: 'text', mime: textMime };
  if (IMAGE_EXTENSIONS.has(extension) || extension === 'pdf')
    return `The file is not a valid .${extension} file.`;
  return `This file type is not accepted${extension ? ` (.${extension})` : ''}. Allowed: ${ALLOWED_TYPES_TEXT}.`;
}

/** Checks a text attachment chunk by chunk: valid UTF-8 and no NUL bytes (so binaries named .txt are refused). */
export class TextCheck {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  /** Returns false as soon as the content is not text. */
  push(chunk: Buffer): boolean {
    if (chunk.includes(0)) return false;
    try {
      this.decoder.decode(chunk, { stream: true });
      return true;
    } catch {
      return false;
    }
  }

  end(): boolean {
    try {
      this.decoder.decode();
      return true;
    } catch {
      return false;
    }
  }
}

const MAX_NAME_LENGTH = 200;

/**
 * The client's file name as display text: the last path segment, without control characters or
 * characters file systems refuse, trimmed and capped. Never used as a path.
 */
export function sanitizeFileName(raw: string | undefined): string {
  let name = (raw ?? '').normalize('NFC');
  name = name.split(/[/\\]/).pop() ?? '';
  // Control characters, characters file systems refuse, and bidi overrides.
  /* eslint-disable no-control-regex */
  const unsafe =
    /[\u0000-\u001f\u007f-\u009f<>:"|?*\u202a-\u202e\u2066-\u2069]/g;
  /* eslint-enable no-control-regex */
  name = name.replace(unsafe, '');
  name = name.replace(/\s+/g, ' ').replace(/^[\s.]+|[\s.]+$/g, '');
  if (name.length > MAX_NAME_LENGTH) {
    const extension = extensionOf(name);
    const keep = extension && extension.length < 16 ? `.${extension}` : '';
    name = `${name.slice(0, MAX_NAME_LENGTH - keep.length).trimEnd()}${keep}`;
  }
  return name || 'file';
}
