import {
  BadRequestException,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  PayloadTooLargeException,
  Query,
  Res,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import {
  FILE_DIR_NAMES,
  FILE_INLINE_MAX_BYTES,
  type FileEntry,
  type FileListing,
  type TodoLists,
} from '@metatronos/shared-types';
import type { Response } from 'express';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { contentDisposition } from '../attachments/attachments.controller';
import {
  FileContentQueryDto,
  FileListingDto,
  FileListQueryDto,
  FilePathQueryDto,
  TodoListsDto,
} from './dto/files.dto';
import { FileDirs, type ResolvedFilePath } from './file-dirs';
import { ContainedDir, FileAccessError } from './contained-file';
import { TodoError, TodoStore } from './todo/todo-store';

/** The most entries one listing returns (a directory the model filled with more is cut). */
const LIST_MAX_ENTRIES = 2000;

/**
 * The Files page's routes: list, read, download and delete inside the two file
 * dirs, every path through `FileDirs.resolve` (`..` and symlinks that leave the
 * dirs are refused with 400), and the TODO lists parsed from the state dir.
 */
@ApiTags('files')
@Controller('files')
export class FilesController {
  constructor(
    private readonly dirs: FileDirs,
    private readonly todo: TodoStore,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'List a directory of file_cache_dir / file_state_dir (without path: the two dirs)',
  })
  @ApiOkResponse({ type: FileListingDto })
  @ApiBadRequestResponse({
    description: 'The path leaves the two dirs, or is not a directory',
  })
  @ApiNotFoundResponse({ description: 'No such directory' })
  async list(@Query() query: FileListQueryDto): Promise<FileListing> {
    if (query.path === undefined || query.path.trim() === '') {
      const real = this.dirs.ensure();
      return {
        path: '',
        entries: await Promise.all(
          FILE_DIR_NAMES.map(async (name) => {
            const dir = await ContainedDir.openRoot(real[name], name);
            try {
              return toEntry(name, name, await dir.stat());
            } finally {
              await dir.close();
            }
          }),
        ),
      };
    }
    const resolved = this.resolve(query.path, true);
    const dir = await this.dirs.openDir(resolved).catch(httpError);
    try {
      const entries: FileEntry[] = [];
      const listed = (await dir.list())
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .slice(0, LIST_MAX_ENTRIES);
      for (const { name, info } of listed) {
        // A link is never followed, so it is not listed as a file or folder either.
        if (!info.isFile() && !info.isDirectory()) continue;
        entries.push(toEntry(name, `${resolved.display}/${name}`, info));
      }
      entries.sort(
        (a, b) =>
          Number(b.kind === 'dir') - Number(a.kind === 'dir') ||
          a.name.localeCompare(b.name),
      );
      return { path: resolved.display, entries };
    } finally {
      await dir.close();
    }
  }

  @Get('todo')
  @ApiOperation({
    summary:
      'The TODO list: open items (TODO.md) and done items (TODO.DONE.md) of file_state_dir',
  })
  @ApiOkResponse({ type: TodoListsDto })
  @ApiBadRequestResponse({
    description: 'TODO.md or TODO.DONE.md is a link that leaves the state dir',
  })
  async todoLists(): Promise<TodoLists> {
    try {
      return await this.todo.list();
    } catch (error) {
      if (error instanceof TodoError)
        throw new BadRequestException(error.message);
      throw error;
    }
  }

  @Get('content')
  @ApiOperation({
    summary:
      'A file: a download, or with inline=1 a text file as text/plain to view',
  })
  @ApiOkResponse({ description: 'The bytes' })
  @ApiBadRequestResponse({
    description: 'The path leaves the two dirs, or names a directory',
  })
  @ApiNotFoundResponse({ description: 'No such file' })
  @ApiPayloadTooLargeResponse({
    description: 'inline=1 on a file over 512 KiB (download it instead)',
  })
  @ApiUnsupportedMediaTypeResponse({
    description: 'inline=1 on a binary file (download it instead)',
  })
  async content(
    @Query() query: FileContentQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const file = this.resolve(query.path, false);
    const handle: FileHandle = await this.dirs
      .open(file, 'read')
      .catch(httpError);
    // From here on everything reads the opened file, whatever happens to the path.
    let handed = false;
    try {
      const info = await handle.stat();
      if (!info.isFile())
        throw new BadRequestException(`${file.display} is not a file`);
      const name = basename(file.absolute);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
      if (query.inline === '1') {
        if (info.size > FILE_INLINE_MAX_BYTES)
          throw new PayloadTooLargeException(
            `${file.display} is ${info.size} bytes; files over ${FILE_INLINE_MAX_BYTES / 1024} KiB can only be downloaded`,
          );
        if (await looksBinary(handle))
          throw new UnsupportedMediaTypeException(
            `${file.display} is not a text file; download it instead`,
          );
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.setHeader(
          'Content-Disposition',
          contentDisposition('inline', name),
        );
      } else {
        res.setHeader('Content-Type', 'application/octet-stream');
        res.setHeader(
          'Content-Disposition',
          contentDisposition('attachment', name),
        );
      }
      res.setHeader('Content-Length', String(info.size));
      const stream = handle.createReadStream({
        start: 0,
        end: Math.max(0, info.size - 1),
      });
      handed = true;
      if (info.size === 0) {
        stream.destroy();
        res.end();
        return;
      }
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    } finally {
      if (!handed) await handle.close();
    }
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete a file, or a directory with its contents (never one of the two dirs themselves)',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({
    description:
      'The path leaves the two dirs, or names one of the dirs itself',
  })
  @ApiNotFoundResponse({ description: 'No such file or directory' })
  async remove(@Query() query: FilePathQueryDto): Promise<void> {
    const target = this.resolve(query.path, false);
    // Removed by name inside its opened folder: a link is removed itself, never what it points to.
    const { dir, name } = await this.dirs.openParent(target).catch(httpError);
    try {
      await dir.remove(name).catch(httpError);
    } finally {
      await dir.close();
    }
  }

  private resolve(path: string, allowDir: boolean): ResolvedFilePath {
    const trimmed = path.trim();
    // The console and the API always name the dir: a bare relative path would silently mean the cache dir.
    if (
      !FILE_DIR_NAMES.some((d) => trimmed === d || trimmed.startsWith(`${d}/`))
    )
      throw new BadRequestException(
        `path must start with file_cache_dir/ or file_state_dir/ (got "${path}")`,
      );
    const resolved = this.dirs.resolve(trimmed, { allowDir });
    if (!resolved.ok) throw new BadRequestException(resolved.error);
    return resolved;
  }
}

function toEntry(name: string, path: string, info: Stats): FileEntry {
  const dir = info.isDirectory();
  return {
    name,
    kind: dir ? 'dir' : 'file',
    size: dir ? 0 : info.size,
    modifiedAt: info.mtime.toISOString(),
    path,
  };
}

/** A refusal of the file opener as the status the console expects: 404 for a missing path, 400 otherwise. */
function httpError(error: unknown): never {
  if (error instanceof FileAccessError) {
    if (error.reason === 'missing')
      throw new NotFoundException(
        error.message.replace(
          /^No such (file|directory): /,
          'No such file or directory: ',
        ),
      );
    throw new BadRequestException(error.message);
  }
  throw error;
}

/** A NUL byte in the first 8 KiB: not text. */
async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}
