import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { AiToolProvider, toolError, type AiTool } from '../../ai-tools/ai-tool';
import { KnownSecrets } from '../../secrets/known-secrets';
import { FileAccessError } from '../contained-file';
import { FileDirs } from '../file-dirs';
import { formatBytes, READ_FILE_MAX_BYTES } from '../file-limits';
import { FILES_MODE } from '../files-mode';

const READ_FILE_ARGS = z.object({
  path: z
    .string()
    .max(4096)
    .describe(
      'file_cache_dir/<path> or file_state_dir/<path>; a relative path is in file_cache_dir',
    ),
});

/** How much of the start is checked for NUL bytes (what `grep` and `git` call binary). */
const BINARY_SNIFF_BYTES = 8192;

/** `read_file`: a text file from the cache or state dir, at most 256 KiB of it. */
@AiToolProvider()
@Injectable()
export class ReadFileTool implements AiTool<typeof READ_FILE_ARGS> {
  readonly name = 'read_file';
  readonly description = `Read a text file from file_cache_dir or file_state_dir (at most ${formatBytes(READ_FILE_MAX_BYTES)} is returned).`;
  readonly schema = READ_FILE_ARGS;
  readonly promptLine =
    'read a text file from file_cache_dir or file_state_dir.';
  readonly modes = [FILES_MODE];

  constructor(
    private readonly dirs: FileDirs,
    private readonly secrets: KnownSecrets,
  ) {}

  async execute({ path }: z.output<typeof READ_FILE_ARGS>): Promise<string> {
    const resolved = this.dirs.resolve(path);
    if (!resolved.ok) return toolError(resolved.error);
    let handle;
    try {
      handle = await this.dirs.open(resolved, 'read');
    } catch (error) {
      if (error instanceof FileAccessError) return toolError(error.message);
      throw error;
    }
    try {
      const { size } = await handle.stat();
      // A few bytes more than the cap: enough to finish a multi-byte character and to know it was cut.
      const want = Math.min(size, READ_FILE_MAX_BYTES) + 4;
      const buffer = Buffer.alloc(want);
      let read = 0;
      while (read < want) {
        const { bytesRead } = await handle.read(buffer, read, want - read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      const bytes = buffer.subarray(0, read);
      const truncated = read > READ_FILE_MAX_BYTES;
      const shown = truncated ? utf8Prefix(bytes, READ_FILE_MAX_BYTES) : bytes;
      const content = decodeText(shown);
      if (content === null || shown.subarray(0, BINARY_SNIFF_BYTES).includes(0))
        return toolError(
          `${resolved.display} is not a text file (${size} bytes of binary data): read_file returns text only. ` +
            'Use bash to inspect it (e.g. `file` or `xxd | head`).',
        );
      const total = Math.max(size, read);
      // A file bash or a download wrote may hold a secret in some form: never hand it over.
      const redacted = (await this.secrets.redactor()).redact(content);
      return JSON.stringify({
        path: resolved.display,
        content: redacted,
        ...(redacted !== content && {
          redacted:
            'A stored secret in this file was replaced by [redacted secret].',
        }),
        bytes: total,
        truncated,
        ...(truncated && {
          note: `Only the first ${formatBytes(READ_FILE_MAX_BYTES)} of ${total} bytes are shown; use bash (e.g. tail, sed -n, grep) to read further.`,
        }),
      });
    } finally {
      await handle.close();
    }
  }
}

/** The longest prefix of at most `max` bytes that does not split a UTF-8 character. */
function utf8Prefix(bytes: Buffer, max: number): Buffer {
  let end = Math.min(max, bytes.length);
  // Step back over continuation bytes (10xxxxxx) so the cut falls on a character start.
  while (end > 0 && end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/** UTF-8 text, or null when the bytes are not valid UTF-8. */
function decodeText(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
