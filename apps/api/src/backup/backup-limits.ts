import { Injectable } from '@nestjs/common';

/** What a restore accepts (tests lower them). */
@Injectable()
export class BackupLimits {
  /** The uploaded archive, as sent (compressed). */
  maxArchiveBytes = 4 * 1024 ** 3;
  /** All files of the archive once unpacked. */
  maxUnpackedBytes = 16 * 1024 ** 3;
  /** Files and folders in the archive. */
  maxEntries = 500_000;
  /** One document of `db/<collection>.ejson` (a BSON document is at most 16 MB; Extended JSON is larger). */
  maxDocumentBytes = 64 * 1024 ** 2;
  /** Unpacked bytes per archive byte: more is a decompression bomb. */
  maxCompressionRatio = 1000;
}
