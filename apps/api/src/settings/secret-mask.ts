import { SECRET_MASK_PREFIX } from '@metatronos/shared-types';

/** `sk-…abcd` → `••••abcd`. Short secrets show no characters at all. */
export function maskSecret(secret: string | null | undefined): string | null {
  if (!secret) return null;
  return secret.length >= 12
    ? `${SECRET_MASK_PREFIX}${secret.slice(-4)}`
    : SECRET_MASK_PREFIX;
}

/** A value the console sent back unchanged from a GET (it only ever shows the masked form). */
export function isMaskedSecret(value: string): boolean {
  return value.startsWith(SECRET_MASK_PREFIX);
}
