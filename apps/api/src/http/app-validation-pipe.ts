import { ValidationPipe, type ValidationError } from '@nestjs/common';

/**
 * The app's ValidationPipe: unknown fields are refused, bodies become DTO
 * instances, and a `null` where a value is expected answers one clear line,
 * "<field> must not be null" (with its path when nested), instead of every
 * check the null failed.
 */
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true });
  }

  protected override flattenValidationErrors(
    errors: ValidationError[],
  ): string[] {
    return super.flattenValidationErrors(errors.map(nullValueError));
  }
}

function nullValueError(error: ValidationError): ValidationError {
  const children = error.children?.map(nullValueError);
  const unknownField = error.constraints?.['whitelistValidation'];
  if (error.value === null && error.constraints && !unknownField) {
    return {
      ...error,
      children,
      constraints: { notNull: `${error.property} must not be null` },
    };
  }
  return { ...error, children };
}
