import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { AiToolProvider, toolError, type AiTool } from '../../ai-tools/ai-tool';
import { KnownSecrets } from '../../secrets/known-secrets';
import { FileAccessError } from '../contained-file';
import { FileDirs } from '../file-dirs';
import { formatBytes, WRITE_FILE_MAX_BYTES } from '../file-limits';
import { FILES_MODE } from '../files-mode';

const WRITE_FILE_ARGS = z.object({
  path: z
    .string()
    .max(4096)
    .describe(
      'Relative paths go to file_cache_dir; file_state_dir/<path> for files to keep',
    ),
  content: z.string().describe('The text to write'),
  mode: z
    .enum(['overwrite', 'append'])
    .optional()
    .describe('overwrite (default) or append'),
});

const CARRIES_SECRET =
  'content carries a secret the owner stored (an API key, token, password or auth profile value), ' +
  'plain or encoded: nothing was written. Leave the secret out.';

/** `write_file`: text into the cache or state dir (parents created), at most 512 KiB per call. */
@AiToolProvider()
@Injectable()
export class WriteFileTool implements AiTool<typeof WRITE_FILE_ARGS> {
  readonly name = 'write_file';
  readonly description = `Write text to a file in file_cache_dir (temporary, pruned after 7 days) or file_state_dir (kept); at most ${formatBytes(WRITE_FILE_MAX_BYTES)} per call.`;
  readonly schema = WRITE_FILE_ARGS;
  readonly promptLine =
    'write or append a text file in file_cache_dir or file_state_dir.';
  readonly modes = [FILES_MODE];

  constructor(
    private readonly dirs: FileDirs,
    private readonly secrets: KnownSecrets,
  ) {}

  async execute({
    path,
    content,
    mode = 'overwrite',
  }: z.output<typeof WRITE_FILE_ARGS>): Promise<string> {
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > WRITE_FILE_MAX_BYTES)
      return toolError(
        `content too large (${bytes} bytes > ${WRITE_FILE_MAX_BYTES} max): nothing was written; write it in parts with mode "append"`,
      );
    const resolved = this.dirs.resolve(path);
    if (!resolved.ok) return toolError(resolved.error);
    const redactor = await this.secrets.redactor();
    if (redactor.detects(content)) return toolError(CARRIES_SECRET);
    let handle;
    try {
      handle = await this.dirs.open(resolved, mode, { createParents: true });
    } catch (error) {
      if (error instanceof FileAccessError) return toolError(error.message);
      throw error;
    }
    try {
      if (mode === 'append' && !redactor.empty) {
        // A secret split over two appends is caught where the parts meet.
        const { size } = await handle.stat();
        const keep = Math.min(size, redactor.longest * 2 + 256);
        const tail = Buffer.alloc(keep);
        await handle.read(tail, 0, keep, size - keep);
        if (redactor.detects(tail.toString('utf8') + content))
          return toolError(CARRIES_SECRET);
      }
      await handle.writeFile(content, 'utf8');
      const { size } = await handle.stat();
      return JSON.stringify({
        path: resolved.display,
        bytes,
        mode,
        size,
        max_bytes: WRITE_FILE_MAX_BYTES,
      });
    } finally {
      await handle.close();
    }
  }
}
