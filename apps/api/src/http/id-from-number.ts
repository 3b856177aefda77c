import { Transform } from 'class-transformer';

/**
 * An id field (a Telegram chat id, a phone number) that also takes an integer
 * JSON number, as people and clients naturally send it; anything else is left
 * for the field's own checks to refuse.
 */
export function IdFromNumber(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'number' && Number.isSafeInteger(value)
      ? String(value)
      : value,
  );
}
