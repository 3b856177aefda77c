import { Module } from '@nestjs/common';
import { BashSandbox } from './bash/bash-sandbox';
import { BashTool } from './bash/bash.tool';
import { FileDirs } from './file-dirs';
import { FilesMode } from './files-mode';
import { ReadFileTool } from './tools/read-file.tool';
import { WriteFileTool } from './tools/write-file.tool';

/**
 * The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files
 * page) and the `files` mode: read_file, write_file and bash in a bubblewrap sandbox.
 */
@Module({
  providers: [
    FileDirs,
    FilesMode,
    ReadFileTool,
    WriteFileTool,
    BashSandbox,
    BashTool,
  ],
  exports: [FileDirs],
})
export class FilesModule {}
