import { Module } from '@nestjs/common';
import { FileDirs } from './file-dirs';
import { FilesMode } from './files-mode';
import { ReadFileTool } from './tools/read-file.tool';
import { WriteFileTool } from './tools/write-file.tool';

/**
 * The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files
 * page) and the `files` mode with read_file and write_file.
 */
@Module({
  providers: [FileDirs, FilesMode, ReadFileTool, WriteFileTool],
  exports: [FileDirs],
})
export class FilesModule {}
