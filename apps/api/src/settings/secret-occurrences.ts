/**
 * Secrets shorter than this are masked only as whole words: a one-letter
 * password must not turn "principalUrl" into "••••rinci••••alUrl".
 */
export const MIN_SECRET_LENGTH_INSIDE_WORDS = 6;

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/**
 * `text` with every occurrence of each secret replaced by `mask(secret)`, the one
 * masker for free text (error messages, tool results, provider and server
 * texts). A secret of 6 characters or more is masked wherever it appears, even
 * glued to other text; a shorter one only as a whole occurrence (no letter,
 * digit or `_` on a side where the secret itself starts or ends with one), so
 * the words around it stay readable. Longest secrets first, so one that
 * contains another is masked whole.
 */
export function maskSecretOccurrences(
  text: string,
  secrets: readonly (string | null | undefined)[],
  mask: string | ((secret: string) => string),
): string {
  const ordered = [...new Set(secrets)]
    .filter((s): s is string => typeof s === 'string' && s.length > 0)
    .sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of ordered) {
    if (!result.includes(secret)) continue;
    const replacement = typeof mask === 'string' ? mask : mask(secret);
    result =
      secret.length >= MIN_SECRET_LENGTH_INSIDE_WORDS
        ? result.split(secret).join(replacement)
        : replaceWhole(result, secret, replacement);
  }
  return result;
}

function replaceWhole(text: string, secret: string, replacement: string) {
  const guardStart = WORD_CHAR.test(secret[0]);
  const guardEnd = WORD_CHAR.test(secret[secret.length - 1]);
  let out = '';
  let from = 0;
  for (let at = text.indexOf(secret); at !== -1; ) {
    const end = at + secret.length;
    const whole =
      (!guardStart || at === 0 || !isWordChar(text, at - 1, -1)) &&
      (!guardEnd || end === text.length || !isWordChar(text, end, 1));
    if (whole) {
      out += text.slice(from, at) + replacement;
      from = end;
      at = text.indexOf(secret, end);
    } else at = text.indexOf(secret, at + 1);
  }
  return out + text.slice(from);
}

/** Whether the character next to an occurrence (before it: `-1`, after it: `1`) is a word character, astral letters included. */
function isWordChar(text: string, index: number, side: -1 | 1): boolean {
  const code =
    side === 1 ? text.codePointAt(index) : codePointBefore(text, index + 1);
  return code !== undefined && WORD_CHAR.test(String.fromCodePoint(code));
}

function codePointBefore(text: string, end: number): number | undefined {
  const low = text.charCodeAt(end - 1);
  if (low >= 0xdc00 && low <= 0xdfff && end >= 2) {
    const high = text.charCodeAt(end - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.codePointAt(end - 2);
  }
  return text.codePointAt(end - 1);
}
