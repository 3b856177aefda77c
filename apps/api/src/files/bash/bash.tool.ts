import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolContext,
} from '../../ai-tools/ai-tool';
import { KnownSecrets } from '../../secrets/known-secrets';
import { FileAccessError } from '../contained-file';
import { FileDirs } from '../file-dirs';
import { FILES_MODE } from '../files-mode';
import { BASH_LIMITS, BashSandbox } from './bash-sandbox';

const BASH_ARGS = z.object({
  cmd: z
    .string()
    .min(1)
    .max(64 * 1024)
    .describe(
      'The bash command; file_cache_dir/... and file_state_dir/... are replaced by the real paths',
    ),
  cwd: z
    .string()
    .max(4096)
    .optional()
    .describe(
      'Working directory in one of the file dirs (default file_cache_dir)',
    ),
  timeout_seconds: z
    .number()
    .min(1)
    .max(BASH_LIMITS.maxTimeoutSeconds)
    .optional()
    .describe(
      `Default ${BASH_LIMITS.defaultTimeoutSeconds}, at most ${BASH_LIMITS.maxTimeoutSeconds}`,
    ),
});

/** `bash`: a command in the bubblewrap sandbox (no network; only the two file dirs writable). */
@AiToolProvider()
@Injectable()
export class BashTool implements AiTool<typeof BASH_ARGS> {
  readonly name = 'bash';
  readonly description =
    'Run a bash command in a sandbox: no network, the system read-only, only file_cache_dir and file_state_dir writable. ' +
    'Returns exit_code and the combined stdout+stderr (at most 256 KiB).';
  readonly schema = BASH_ARGS;
  readonly promptLine =
    'run a bash command in a sandbox without network (only the file dirs are writable).';
  readonly modes = [FILES_MODE];
  /** Its own limit is at most 300 s; the runner waits a little longer for the kill and the output. */
  readonly timeoutMs = (BASH_LIMITS.maxTimeoutSeconds + 10) * 1000;

  constructor(
    private readonly sandbox: BashSandbox,
    private readonly dirs: FileDirs,
    private readonly secrets: KnownSecrets,
  ) {}

  async isAvailable(): Promise<boolean> {
    return (await this.sandbox.unavailableReason()) === null;
  }

  unavailableReason(): Promise<string | null> {
    return this.sandbox.unavailableReason();
  }

  async execute(
    args: z.output<typeof BASH_ARGS>,
    { signal }: AiToolContext,
  ): Promise<string> {
    if (!args.cmd.trim()) return toolError('cmd must not be empty');
    if (args.cmd.includes('\0'))
      return toolError('cmd must not contain NUL characters');
    let cwd = this.dirs.ensure().file_cache_dir;
    if (args.cwd !== undefined && args.cwd.trim() !== '') {
      const resolved = this.dirs.resolve(args.cwd, { allowDir: true });
      if (!resolved.ok) return toolError(`cwd: ${resolved.error}`);
      // Opened once without following links, as every path is; bwrap then gets the
      // name, which is safe: inside the sandbox nothing but the file dirs is writable or secret.
      try {
        await (await this.dirs.openDir(resolved)).close();
      } catch (error) {
        if (!(error instanceof FileAccessError)) throw error;
        return toolError(
          `cwd: ${resolved.display} is not an existing directory (${error.message})`,
        );
      }
      cwd = resolved.absolute;
    }
    const result = await this.sandbox.run({
      cmd: this.dirs.expandAliases(args.cmd),
      cwd,
      timeoutSeconds: args.timeout_seconds ?? BASH_LIMITS.defaultTimeoutSeconds,
      signal,
    });
    // Whatever the command printed, no stored secret reaches the model in a form we can detect.
    const redactor = await this.secrets.redactor();
    return JSON.stringify({
      ...result,
      output: redactor.redact(result.output),
    });
  }
}
