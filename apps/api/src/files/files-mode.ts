import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../ai-tools/ai-tool';

export const FILES_MODE = 'files';

/** The `files` mode: read_file, write_file and the sandboxed bash. */
@AiModeProvider()
@Injectable()
export class FilesMode implements AiMode {
  readonly name = FILES_MODE;
  readonly description =
    'read and write files in the cache and state dirs, run bash in a sandbox';
}
