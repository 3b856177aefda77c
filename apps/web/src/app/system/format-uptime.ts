const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Human-readable uptime with the two most significant units:
 * "42 s", "5 min 3 s", "3 h 12 min", "2 d 4 h". Negative or non-finite input counts as 0.
 */
export function formatUptime(totalSeconds: number): string {
  const seconds = Number.isFinite(totalSeconds)
    ? Math.max(0, Math.floor(totalSeconds))
    : 0;
  if (seconds < MINUTE) return `${seconds} s`;
  if (seconds < HOUR)
    return withSecond(
      Math.floor(seconds / MINUTE),
      'min',
      seconds % MINUTE,
      's',
    );
  if (seconds < DAY)
    return withSecond(
      Math.floor(seconds / HOUR),
      'h',
      Math.floor((seconds % HOUR) / MINUTE),
      'min',
    );
  return withSecond(
    Math.floor(seconds / DAY),
    'd',
    Math.floor((seconds % DAY) / HOUR),
    'h',
  );
}

function withSecond(
  major: number,
  majorUnit: string,
  minor: number,
  minorUnit: string,
): string {
  return minor
    ? `${major} ${majorUnit} ${minor} ${minorUnit}`
    : `${major} ${majorUnit}`;
}
