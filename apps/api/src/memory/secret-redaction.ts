import { maskSecret } from '../settings/secret-mask';

/**
 * Shapes of credentials that are secrets wherever they appear, known to the settings or not:
 * provider keys, bot tokens, bearer tokens and "password: …" phrases.
 */
const SECRET_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b\d{6,12}:[A-Za-z0-9_-]{30,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/gi,
  /\b(password|passwort|passcode|pin|api[ _-]?key|secret|token)(\s*(?:is|:|=)\s*)\S+/gi,
];

/** Every SECRET_SHAPES pattern starts with one of these. */
const MAYBE_SECRET =
  /sk-|AIza|gh[pousr]_|xox[abprs]-|\d{6}:|bearer|pass|pin|api|secret|token/i;

/**
 * Removes secrets from a text before it becomes a note, enters the search index or
 * leaves as a result: the owner's stored keys and auth profile values (exactly), and
 * anything shaped like a credential.
 */
export function redactSecrets(text: string, known: readonly string[]): string {
  let out = text;
  for (const secret of known)
    if (secret && out.includes(secret))
      out = out.split(secret).join(maskSecret(secret) ?? '');
  // One cheap test first: most texts hold nothing credential-shaped (the index reads 100,000 of them at start).
  if (!MAYBE_SECRET.test(out)) return out;
  for (const shape of SECRET_SHAPES)
    out = out.replace(shape, (match, label?: string, sep?: string) =>
      typeof label === 'string' && typeof sep === 'string'
        ? `${label}${sep}[redacted]`
        : '[redacted]',
    );
  return out;
}
