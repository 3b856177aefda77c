import type { MediaMime } from '@metatronos/shared-types';

/** What the header of an image file says: its real type (by magic bytes, not by claim) and size. */
export interface ImageInfo {
  mime: MediaMime;
  width: number;
  height: number;
}

export const EXTENSION_BY_MIME: Record<MediaMime, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
};

const PNG_SIGNATURE = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
]);

/**
 * Reads the type and dimensions from a PNG, JPEG or WebP header. `null` when
 * the bytes are none of these or the header is cut short. No decoding: only
 * the few header bytes are looked at.
 */
export function readImageInfo(bytes: Buffer): ImageInfo | null {
  if (
    bytes.length >= 24 &&
    bytes.subarray(0, 8).equals(PNG_SIGNATURE) &&
    bytes.toString('latin1', 12, 16) === 'IHDR'
  ) {
    return sized('image/png', bytes.readUInt32BE(16), bytes.readUInt32BE(20));
  }
  if (
    bytes.length >= 4 &&
    bytes[0] === 0xff &&
    bytes[1] === 0xd8 &&
    bytes[2] === 0xff
  )
    return readJpeg(bytes);
  if (
    bytes.length >= 30 &&
    bytes.toString('latin1', 0, 4) === 'RIFF' &&
    bytes.toString('latin1', 8, 12) === 'WEBP'
  )
    return readWebp(bytes);
  return null;
}

function sized(
  mime: MediaMime,
  width: number,
  height: number,
): ImageInfo | null {
  return width > 0 && height > 0 ? { mime, width, height } : null;
}

/** Walks the JPEG segments to the first start-of-frame marker (SOF0–SOF15 except DHT, JPG, DAC). */
function readJpeg(bytes: Buffer): ImageInfo | null {
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return null;
    const marker = bytes[offset + 1];
    // Fill bytes, and markers without a length (TEM, RSTn).
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / start of scan before any frame
    const length = bytes.readUInt16BE(offset + 2);
    if (length < 2) return null;
    const isFrame =
      marker >= 0xc0 &&
      marker <= 0xcf &&
      marker !== 0xc4 &&
      marker !== 0xc8 &&
      marker !== 0xcc;
    if (isFrame) {
      if (offset + 9 > bytes.length) return null;
      return sized(
        'image/jpeg',
        bytes.readUInt16BE(offset + 7),
        bytes.readUInt16BE(offset + 5),
      );
    }
    offset += 2 + length;
  }
  return null;
}

/** The first chunk of a WebP says which of the three formats it is; each stores the size differently. */
function readWebp(bytes: Buffer): ImageInfo | null {
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // Lossy: a key frame starts with the 9d 01 2a start code, then 14-bit width and height.
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a)
      return null;
    return sized(
      'image/webp',
      bytes.readUInt16LE(26) & 0x3fff,
      bytes.readUInt16LE(28) & 0x3fff,
    );
  }
  if (chunk === 'VP8L') {
    // Lossless: signature 0x2f, then 14 bits width-1 and 14 bits height-1.
    if (bytes[20] !== 0x2f) return null;
    const bits = bytes.readUInt32LE(21);
    return sized(
      'image/webp',
      (bits & 0x3fff) + 1,
      ((bits >>> 14) & 0x3fff) + 1,
    );
  }
  if (chunk === 'VP8X') {
    // Extended: 24-bit canvas width-1 and height-1.
    return sized(
      'image/webp',
      bytes.readUIntLE(24, 3) + 1,
      bytes.readUIntLE(27, 3) + 1,
    );
  }
  return null;
}
