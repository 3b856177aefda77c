/** What a redacted occurrence becomes. */
export const REDACTED_SECRET = '[redacted secret]';

/** Below this length a secret is only matched as a whole word (plain or reversed): "p" must not garble "principalUrl". */
export const SHORT_SECRET_LENGTH = 6;

/** Shorter secrets are not looked for at all (too many accidental matches). */
const MIN_SECRET_LENGTH = 4;

/** An encoded needle shorter than this would match by chance. */
const MIN_ENCODED_NEEDLE = 6;

/**
 * How the text to scan was decoded: `text` (a JS string from UTF-8), or `latin1`
 * (one char per byte, for binary-safe scanning of a byte stream).
 */
export type ScanEncoding = 'text' | 'latin1';

interface Needle {
  value: string;
  /** Looked for in the view with whitespace removed (encoded forms may be wrapped). */
  stripped: boolean;
  /** Hex: matched without regard to case. */
  caseless: boolean;
  /** Only between non-word characters (short secrets). */
  wholeWord: boolean;
}

/**
 * Finds the secrets the app holds in the forms a model (or a program it runs) can
 * trivially produce from them, and masks them:
 * plain, reversed, base64 (standard and URL-safe, at each of the 3 byte
 * alignments, so a secret inside a longer encoded text is found too), hex (any
 * case). Encoded forms and long plain ones are also found when wrapped over lines
 * (`base64` wraps at 76). A secret shorter than 6 characters is only masked as a
 * whole word, plain or reversed. Pure: no I/O, the caller gives the secrets.
 */
export class SecretRedactor {
  private readonly needles: Needle[];
  /** The longest needle: how much of a stream must be kept back to find one across chunks. */
  readonly longest: number;

  constructor(
    secrets: readonly (string | null | undefined)[],
    encoding: ScanEncoding = 'text',
  ) {
    const needles = new Map<string, Needle>();
    const add = (given: Needle) => {
      // The stripped view has no whitespace: neither may a needle looked for in it.
      const needle = given.stripped
        ? { ...given, value: given.value.replace(/[\t-\r ]/g, '') }
        : given;
      if (needle.value === '') return;
      const key = `${needle.value}\0${needle.stripped}${needle.caseless}${needle.wholeWord}`;
      if (!needles.has(key)) needles.set(key, needle);
    };
    for (const secret of new Set(secrets)) {
      if (!secret || secret.trim().length < MIN_SECRET_LENGTH) continue;
      const bytes = Buffer.from(secret, 'utf8');
      const plain = encoding === 'text' ? secret : bytes.toString('latin1');
      const reversed = [...plain].reverse().join('');
      if (secret.length < SHORT_SECRET_LENGTH) {
        for (const value of [plain, reversed])
          add({ value, stripped: false, caseless: false, wholeWord: true });
        continue;
      }
      for (const value of [plain, reversed])
        add({ value, stripped: true, caseless: false, wholeWord: false });
      add({
        value: bytes.toString('hex'),
        stripped: true,
        caseless: true,
        wholeWord: false,
      });
      for (const value of base64Cores(bytes)) {
        add({ value, stripped: true, caseless: false, wholeWord: false });
        add({
          value: value.replace(/\+/g, '-').replace(/\//g, '_'),
          stripped: true,
          caseless: false,
          wholeWord: false,
        });
      }
    }
    // Longest first: a secret that contains another is masked as a whole.
    this.needles = [...needles.values()].sort(
      (a, b) => b.value.length - a.value.length,
    );
    this.longest = this.needles.reduce(
      (m, n) => Math.max(m, n.value.length),
      0,
    );
  }

  get empty(): boolean {
    return this.needles.length === 0;
  }

  /** Whether `text` carries any known secret in a detectable form. */
  detects(text: string): boolean {
    return this.ranges(text).length > 0;
  }

  /** `text` with every detected occurrence replaced by `[redacted secret]`. */
  redact(text: string): string {
    return applyRanges(text, this.ranges(text));
  }

  /**
   * The occurrences in `text`, as [start, end) ranges of the original text,
   * sorted and merged.
   */
  ranges(text: string): Array<[number, number]> {
    if (this.empty || text === '') return [];
    const found: Array<[number, number]> = [];
    // The whitespace-free view (ASCII whitespace only: what wrapping tools insert).
    const stripped = text.replace(/[\t-\r ]+/g, '');
    const lowered = stripped.replace(/[A-Z]+/g, (c) => c.toLowerCase());
    // Where each character of the view came from: built only when something was found.
    let positions: Int32Array | null = null;
    const origin = (at: number): number => {
      positions ??= strippedPositions(text, stripped.length);
      return positions[at];
    };
    for (const needle of this.needles) {
      if (!needle.stripped) {
        for (const at of occurrences(text, needle.value))
          if (!needle.wholeWord || isWholeWord(text, at, needle.value.length))
            found.push([at, at + needle.value.length]);
        continue;
      }
      const view = needle.caseless ? lowered : stripped;
      for (const at of occurrences(view, needle.value))
        found.push([origin(at), origin(at + needle.value.length - 1) + 1]);
    }
    return merge(found);
  }
}

/**
 * The part of base64(x + secret + y) that depends on the secret alone, for the
 * 3 lengths of x modulo 3: what is found wherever the secret sits in the encoded text.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(
      'base64',
    );
    // Characters mixing prefix bits: none, 2, 3 for an offset of 0, 1, 2.
    const skip = [0, 2, 3][offset];
    const total = offset + bytes.length;
    const full = Math.floor(total / 3) * 4;
    // In a last partial group, the characters made from the secret's bits alone.
    const tail = [0, 1, 2][total % 3];
    const core = encoded.slice(skip, full + tail);
    if (core.length >= MIN_ENCODED_NEEDLE) cores.push(core);
  }
  return cores;
}

function strippedPositions(text: string, length: number): Int32Array {
  const positions = new Int32Array(length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    positions[n++] = i;
  }
  return positions;
}

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + 1)
  )
    found.push(at);
  return found;
}

function isWholeWord(text: string, at: number, length: number): boolean {
  const word = /[\p{L}\p{N}_]/u;
  const before = at > 0 ? text[at - 1] : '';
  const after = text[at + length] ?? '';
  return !(before && word.test(before)) && !(after && word.test(after));
}

function merge(ranges: Array<[number, number]>): Array<[number, number]> {
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: Array<[number, number]> = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last && range[0] < last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push([range[0], range[1]]);
  }
  return merged;
}

function applyRanges(text: string, ranges: Array<[number, number]>): string {
  if (ranges.length === 0) return text;
  let out = '';
  let from = 0;
  for (const [start, end] of ranges) {
    out += text.slice(from, start) + REDACTED_SECRET;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * Redacts a byte stream (a download) chunk by chunk without missing a secret cut
 * across two chunks: the tail that might hold the start of one is kept back until
 * the next chunk (or the end). Bytes are scanned as latin1, so binary files pass
 * through unchanged where no secret is found.
 */
export class StreamingSecretRedactor {
  private carry = '';
  private readonly keep: number;
  /** How many occurrences were masked so far. */
  count = 0;

  constructor(private readonly redactor: SecretRedactor) {
    // Encoded forms may be wrapped: leave room for line breaks inside one.
    this.keep = redactor.longest * 2 + 256;
  }

  push(chunk: Buffer): Buffer {
    if (this.redactor.empty) return chunk;
    const text = this.carry + chunk.toString('latin1');
    let cut = Math.max(0, text.length - this.keep);
    const ranges = this.redactor.ranges(text);
    for (const [start, end] of ranges)
      if (start < cut && end > cut) cut = start;
    const done = ranges.filter(([, end]) => end <= cut);
    this.count += done.length;
    this.carry = text.slice(cut);
    return Buffer.from(applyRanges(text.slice(0, cut), done), 'latin1');
  }

  end(): Buffer {
    if (this.redactor.empty) return Buffer.alloc(0);
    const ranges = this.redactor.ranges(this.carry);
    this.count += ranges.length;
    const out = Buffer.from(applyRanges(this.carry, ranges), 'latin1');
    this.carry = '';
    return out;
  }
}

/**
 * Shapes of credentials that are secrets wherever they appear, held by the app or not:
 * provider keys, bot tokens, bearer tokens and "password: …" phrases. For text that is
 * kept (memory notes and their search index), where a key pasted in a chat but never
 * saved in the settings must not stay either.
 */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b\d{6,12}:[A-Za-z0-9_-]{30,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/gi,
  /\b(password|passwort|passcode|pin|api[ _-]?key|secret|token)(\s*(?:is|:|=)\s*)\S+/gi,
];

/** Every CREDENTIAL_SHAPES pattern starts with one of these: one cheap test first, most texts hold none. */
const MAYBE_CREDENTIAL =
  /sk-|AIza|gh[pousr]_|xox[abprs]-|\d{6}:|bearer|pass|pin|api|secret|token/i;

/** `text` with every credential-shaped value replaced (a "password: …" phrase keeps its label). */
export function redactCredentialShapes(text: string): string {
  if (!MAYBE_CREDENTIAL.test(text)) return text;
  let out = text;
  for (const shape of CREDENTIAL_SHAPES)
    out = out.replace(shape, (match, label?: string, sep?: string) =>
      typeof label === 'string' && typeof sep === 'string'
        ? `${label}${sep}[redacted]`
        : '[redacted]',
    );
  return out;
}
