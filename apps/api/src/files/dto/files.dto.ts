import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import type {
  FileEntry,
  FileListing,
  TodoItem,
  TodoLists,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';

const PATH_MAX_LENGTH = 1024;

export class FilePathQueryDto {
  @ApiProperty({
    description:
      'A path inside one of the two dirs: `file_cache_dir/<path>` or `file_state_dir/<path>`',
    example: 'file_state_dir/TODO.md',
    maxLength: PATH_MAX_LENGTH,
  })
  @IsString()
  @MaxLength(PATH_MAX_LENGTH)
  path!: string;
}

export class FileListQueryDto {
  @ApiPropertyOptional({
    description:
      'The directory to list (`file_state_dir`, `file_cache_dir/reports`); left out: the two dirs themselves',
    example: 'file_state_dir',
    maxLength: PATH_MAX_LENGTH,
  })
  @OptionalField()
  @IsString()
  @MaxLength(PATH_MAX_LENGTH)
  path?: string;
}

export class FileContentQueryDto extends FilePathQueryDto {
  @ApiPropertyOptional({
    enum: ['0', '1'],
    description:
      '`1`: answer a text file as `text/plain` to view it (up to 512 KiB); otherwise a download',
  })
  @OptionalField()
  @IsIn(['0', '1'])
  inline?: '0' | '1';
}

export class FileEntryDto implements FileEntry {
  @ApiProperty({ example: 'TODO.md' })
  name!: string;

  @ApiProperty({ enum: ['file', 'dir'] })
  kind!: 'file' | 'dir';

  @ApiProperty({ description: 'Bytes (0 for a directory)', example: 312 })
  size!: number;

  @ApiProperty({ example: '2026-02-09T10:30:00.000Z' })
  modifiedAt!: string;

  @ApiProperty({
    description: 'The path to pass back to these routes',
    example: 'file_state_dir/TODO.md',
  })
  path!: string;
}

export class FileListingDto implements FileListing {
  @ApiProperty({
    description: "The listed directory ('' for the top level)",
    example: 'file_state_dir',
  })
  path!: string;

  @ApiProperty({
    type: [FileEntryDto],
    description: 'Directories first, then files, by name',
  })
  entries!: FileEntryDto[];
}

export class TodoItemDto implements TodoItem {
  @ApiProperty({ example: 'Call the plumber' })
  content!: string;

  @ApiProperty({
    description:
      "`YYYY-MM-DD HH:mm` in the owner's time zone ('' for a hand-written line)",
    example: '2026-02-09 10:00',
  })
  createdAt!: string;

  @ApiPropertyOptional({ example: '2026-02-09 10:30' })
  doneAt?: string;

  @ApiPropertyOptional({ example: 'wa:14155551234' })
  chatId?: string;

  @ApiPropertyOptional({ type: [String], example: ['Alice'] })
  people?: string[];
}

export class TodoListsDto implements TodoLists {
  @ApiProperty({ type: [TodoItemDto], description: 'TODO.md, oldest first' })
  open!: TodoItemDto[];

  @ApiProperty({
    type: [TodoItemDto],
    description: 'TODO.DONE.md, oldest first',
  })
  done!: TodoItemDto[];
}
