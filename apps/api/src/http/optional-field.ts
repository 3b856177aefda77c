import { IsOptional, ValidateIf } from 'class-validator';

/**
 * A request field the client may leave out. Unlike `@IsOptional()`, which
 * skips the checks for `null` too (and so hands `null` to a service that
 * expects a string), only an absent field skips them: `null` is checked like
 * any value and refused with "<field> must not be null". Use this on every
 * optional field unless null has a meaning of its own.
 */
export function OptionalField(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}

/**
 * An optional field where `null` means something by the API contract (it
 * clears a setting): absent and `null` both skip the checks. Document it with
 * `nullable: true` in `@ApiProperty`.
 */
export function OptionalOrNull(): PropertyDecorator {
  return IsOptional();
}
