import type { IncomingHttpHeaders } from 'node:http';
import type { Readable, Writable } from 'node:stream';

/** The part of busboy's API used here (busboy ships no types; it is installed with multer / @nestjs/platform-express). */
export interface BusboyFileInfo {
  filename: string | undefined;
  encoding: string;
  mimeType: string;
}

interface BusboyEvents {
  on(
    event: 'file',
    listener: (field: string, stream: Readable, info: BusboyFileInfo) => void,
  ): this;
  on(event: 'field', listener: (field: string, value: string) => void): this;
  on(
    event: 'filesLimit' | 'fieldsLimit' | 'partsLimit' | 'close' | 'finish',
    listener: () => void,
  ): this;
  on(event: 'error', listener: (error: Error) => void): this;
}

export type BusboyParser = BusboyEvents & Writable;

export interface BusboyOptions {
  headers: IncomingHttpHeaders;
  defParamCharset?: string;
  preservePath?: boolean;
  limits?: {
    fileSize?: number;
    files?: number;
    fields?: number;
    parts?: number;
    fieldSize?: number;
  };
}

export const busboy = require('busboy') as (
  options: BusboyOptions,
) => BusboyParser;
