import { BadRequestException } from '@nestjs/common';

/** The seed's texts. */
export const PERMISSION_NOT_FOUND = 'Permission not found';
export const PERMISSION_EXISTS =
  'Permission already exists for this phone number';
export const PERMISSION_FIELDS_REQUIRED =
  'phoneNumber and displayName are required';
export const INVALID_PHONE_NUMBER = 'Invalid phone number';

/** A human label is one line: the prompt lists it, so it must not be able to add lines of its own. */
export const WHATSAPP_DISPLAY_NAME_MAX_LENGTH = 100;
export const PHONE_MIN_DIGITS = 7;
export const PHONE_MAX_DIGITS = 15;

/** The digits of a phone number (`+1 (415) 555-1234` → `14155551234`), or null when it cannot be one (E.164: 7 to 15 digits). */
export function normalisePhoneNumber(value: string): string | null {
  const digits = value.replace(/\D/g, '');
  return digits.length >= PHONE_MIN_DIGITS && digits.length <= PHONE_MAX_DIGITS
    ? digits
    : null;
}

export function requirePhoneNumber(value: string): string {
  const digits = normalisePhoneNumber(value);
  if (!digits) throw new BadRequestException(INVALID_PHONE_NUMBER);
  return digits;
}

/** Whitespace runs (newlines included) become one space; null when nothing is left. */
export function cleanDisplayName(value: string): string | null {
  const name = value.replace(/\s+/g, ' ').trim();
  return name ? name : null;
}

export function checkDisplayName(value: string): string {
  const name = cleanDisplayName(value);
  if (!name) throw new BadRequestException('displayName must not be empty');
  if (name.length > WHATSAPP_DISPLAY_NAME_MAX_LENGTH) {
    throw new BadRequestException(
      `displayName must be at most ${WHATSAPP_DISPLAY_NAME_MAX_LENGTH} characters`,
    );
  }
  return name;
}
