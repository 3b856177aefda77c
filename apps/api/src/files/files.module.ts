import { Module } from '@nestjs/common';
import { BashSandbox } from './bash/bash-sandbox';
import { BashTool } from './bash/bash.tool';
import { CachePruner } from './cache-pruner';
import { FileDirs } from './file-dirs';
import { FilesMode } from './files-mode';
import { ReadFileTool } from './tools/read-file.tool';
import { WriteFileTool } from './tools/write-file.tool';

/**
 * The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files
 * page), the `files` mode with read_file, write_file and the sandboxed bash, and the
 * cache dir's pruning.
 */
@Module({
  providers: [
    FileDirs,
    CachePruner,
    FilesMode,
    ReadFileTool,
    WriteFileTool,
    BashSandbox,
    BashTool,
  ],
  exports: [FileDirs],
})
export class FilesModule {}
