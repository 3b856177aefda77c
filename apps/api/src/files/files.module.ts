import { Module } from '@nestjs/common';
import { FileDirs } from './file-dirs';

/** The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files page). */
@Module({
  providers: [FileDirs],
  exports: [FileDirs],
})
export class FilesModule {}
