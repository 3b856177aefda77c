import {
  BadRequestException,
  ValidationPipe,
  type ArgumentMetadata,
  type ValidationError,
} from '@nestjs/common';
import { inPlainWords } from './field-labels';
import { cacheValidationMetadataLookups } from './validation-metadata-cache';

/**
 * Keys class-transformer skips when it builds a DTO (against prototype
 * pollution): without this check they would vanish silently instead of being
 * refused like every other unknown field.
 */
const SKIPPED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The app's ValidationPipe: unknown fields are refused, bodies become DTO
 * instances, and a `null` where a value is expected answers one clear line,
 * "<field> must not be null" (with its path when nested), instead of every
 * check the null failed.
 */
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true });
    cacheValidationMetadataLookups();
  }

  override async transform(
    value: unknown,
    metadata: ArgumentMetadata,
  ): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query') {
      const path = skippedKeyPath(value);
      if (path !== null)
        throw new BadRequestException([`${path} should not exist`]);
    }
    return super.transform(value, metadata);
  }

  /** As Nest's, with each message's field path in words (see field-labels.ts). */
  protected override flattenValidationErrors(
    errors: ValidationError[],
  ): string[] {
    return errors
      .map(nullValueError)
      .flatMap((error) => this.mapChildrenToValidationErrors(error))
      .flatMap((error) => {
        const messages = Object.values(error.constraints ?? {});
        return messages.map((message) => {
          const path = leadingPathOf(message, error.property);
          return path ? inPlainWords(message, path) : message;
        });
      });
  }
}

/**
 * Where the input has a key the DTO transformation would skip, in the pipe's
 * message style (`property __proto__`, `quietHours.0.property constructor`);
 * null when none. Iterative: the input's depth is already bounded, but no
 * recursion is needed.
 */
function skippedKeyPath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [node, prefix] = stack.pop() as [unknown, string];
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      if (SKIPPED_KEYS.has(key)) return `${prefix}property ${key}`;
      stack.push([(node as Record<string, unknown>)[key], `${prefix}${key}.`]);
    }
  }
  return null;
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

/**
 * The field path a message starts with, when it ends in the error's own property: the pipe prefixes
 * a nested field's messages with its parents ("quietHours.0.start must …").
 */
function leadingPathOf(message: string, property: string): string | null {
  const head = message.split(' ', 1)[0];
  return head === property || head.endsWith(`.${property}`) ? head : null;
}
