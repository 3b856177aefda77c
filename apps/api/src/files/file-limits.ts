/** The toolbelt's file limits (the seed's numbers). */
export const READ_FILE_MAX_BYTES = 256 * 1024;
export const WRITE_FILE_MAX_BYTES = 512 * 1024;

/** Cache pruning: files older than this go first, then the oldest beyond the two caps. */
export const CACHE_MAX_AGE_MS = 7 * 24 * 3_600_000;
export const CACHE_MAX_FILES = 1_000;
export const CACHE_MAX_BYTES = 512 * 1024 * 1024;
export const CACHE_PRUNE_INTERVAL_MS = 3_600_000;

/** Sizes for messages: 262144 → "256 KiB". */
export function formatBytes(bytes: number): string {
  const GiB = 1024 * 1024 * 1024;
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB} GiB`;
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0)
    return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
