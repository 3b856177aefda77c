import { z } from 'zod';

/**
 * Argument forms models (and people) naturally send for the same thing: an id
 * as a JSON number or a string, one item where a list is asked for, a number
 * in quotes. Every tool wraps such arguments here, so the schema the provider
 * sees stays the plain type while both forms are accepted.
 */

/** An id given as a string, or as an integer JSON number (a Telegram chat id, a phone number). */
export function idArgument<T extends z.ZodType<string | undefined>>(schema: T) {
  return z.preprocess(
    (value) =>
      typeof value === 'number' && Number.isSafeInteger(value)
        ? String(value)
        : value,
    schema,
  );
}

/** An integer given as a number or as digits in a string (`"42"`). */
export function integerArgument<T extends z.ZodType<number | undefined>>(
  schema: T,
) {
  return z.preprocess(
    (value) =>
      typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value)
        ? Number(value)
        : value,
    schema,
  );
}

/** A list that also takes one item on its own (`"a@example.com"` for `["a@example.com"]`). */
export function listArgument<T extends z.ZodType<unknown[] | undefined>>(
  schema: T,
) {
  return z.preprocess(
    (value) =>
      value === undefined || value === null || Array.isArray(value)
        ? value
        : [value],
    schema,
  );
}
