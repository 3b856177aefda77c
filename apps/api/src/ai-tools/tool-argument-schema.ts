import { z } from 'zod';
import type { JsonSchemaObject } from '../llm/llm-adapter';
import type { AiToolSchema } from './ai-tool';

/**
 * The JSON Schema keywords a tool's parameters may use: the subset both
 * providers read the same way (Gemini's function declarations refuse or
 * ignore unions, `$ref`, `const` and friends; OpenAI takes anything).
 */
const PORTABLE_KEYWORDS = new Set([
  'type',
  'description',
  'enum',
  'properties',
  'required',
  'items',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
]);

/**
 * The JSON Schema the provider sees, generated from the tool's zod schema.
 * Dropped on the way: `$schema`, `additionalProperties` and `propertyNames`
 * (free-form objects are plain `{"type": "object"}`; unknown arguments are
 * ignored, not refused) and the ±2^53 bounds zod puts on every integer.
 * Throws when the schema needs a keyword outside the portable subset, so a
 * tool that one provider would reject fails at start-up, not in a chat.
 */
export function toolParameters(
  toolName: string,
  schema: AiToolSchema,
): JsonSchemaObject {
  const generated = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'throw',
  }) as Record<string, unknown>;
  const portable = portableSchema(generated, toolName, '');
  if (portable['type'] !== 'object')
    throw new Error(`Tool '${toolName}': arguments must be an object`);
  return {
    properties: {},
    ...portable,
    type: 'object',
  } as JsonSchemaObject;
}

function portableSchema(
  node: Record<string, unknown>,
  toolName: string,
  at: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      key === '$schema' ||
      key === 'additionalProperties' ||
      key === 'propertyNames'
    )
      continue;
    if (
      (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
      (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)
    )
      continue;
    if (key === 'type' && typeof value !== 'string')
      throw new Error(
        `Tool '${toolName}': a list of types (at '${at || '/'}') is not accepted by every provider`,
      );
    if (!PORTABLE_KEYWORDS.has(key))
      throw new Error(
        `Tool '${toolName}': the JSON Schema keyword '${key}' (at '${at || '/'}') is not accepted by every provider`,
      );
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Record<string, unknown>>).map(
          ([name, property]) => [
            name,
            portableSchema(property, toolName, `${at}/${name}`),
          ],
        ),
      );
    } else if (key === 'items') {
      out[key] = portableSchema(
        value as Record<string, unknown>,
        toolName,
        `${at}[]`,
      );
    } else {
      out[key] = value;
    }
  }
  return out;
}

export type ToolArgumentsCheck<T> =
  | { ok: true; args: T }
  | { ok: false; error: string };

/** At most this many problems in one answer: enough to fix a call, short enough to read. */
const MAX_REPORTED_ISSUES = 5;

/**
 * Validates one call's arguments with the tool's schema. A `null` top-level
 * argument counts as omitted (models often send `null` for "not given").
 * On failure: one message for the model naming each problem by its path,
 * e.g. `Argument 'quiet_hours[0].start' must be a time like "22:00"`.
 */
export function parseToolArguments<Schema extends AiToolSchema>(
  schema: Schema,
  raw: unknown,
): ToolArgumentsCheck<z.output<Schema>> {
  const result = schema.safeParse(withoutNullFields(raw), {
    error: issuePredicate,
  });
  if (result.success) return { ok: true, args: result.data };
  return {
    ok: false,
    error: result.error.issues
      .slice(0, MAX_REPORTED_ISSUES)
      .map(issueSentence)
      .join('; '),
  };
}

function withoutNullFields(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  // Most calls have no null field: their arguments are checked as they are (the schema copies them).
  if (!Object.values(raw).includes(null)) return raw;
  return Object.fromEntries(
    Object.entries(raw).filter(([, value]) => value !== null),
  );
}

/** The predicate an issue's message holds when the value was not given at all. */
const MISSING = 'is missing';

function issueSentence(issue: z.core.$ZodIssue): string {
  const path = argumentPath(issue.path);
  if (!path)
    return issue.code === 'invalid_type'
      ? 'Arguments must be a JSON object'
      : `Arguments ${issue.message}`;
  if (issue.message === MISSING) return `Missing required argument '${path}'`;
  return `Argument '${path}' ${issue.message}`;
}

/** `['quiet_hours', 0, 'start']` → `quiet_hours[0].start`. */
export function argumentPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    const name = String(key);
    return text ? `${text}.${name}` : name;
  }, '');
}

/**
 * The message of an issue the schema did not word itself, as a predicate
 * ("must be a string (got number)") that `issueSentence` puts after the path.
 * A schema's own messages follow the same rule: `{ error: 'must be …' }`.
 */
function issuePredicate(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return MISSING;
      return `must be ${withArticle(expectedType(issue))} (got ${jsonTypeOf(issue.input)})`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'too_big':
      return tooBig(issue);
    case 'too_small':
      return tooSmall(issue);
    case 'invalid_format':
      return issue.format === 'regex' && issue.pattern
        ? `must match ${issue.pattern}`
        : `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return `has ${issue.keys.length === 1 ? 'an unknown field' : 'unknown fields'} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_union':
      return 'does not match any accepted form';
    default:
      return undefined;
  }
}

function tooBig(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooBig>): string {
  const limit = String(issue.maximum);
  switch (issue.origin) {
    case 'string':
      return `is ${characters(issue.input)} characters; the limit is ${limit}`;
    case 'array':
      return `holds ${(issue.input as unknown[]).length} items; at most ${limit} are allowed`;
    default:
      return issue.inclusive === false
        ? `must be less than ${limit}`
        : `must be at most ${limit}`;
  }
}

function tooSmall(
  issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall>,
): string {
  const limit = String(issue.minimum);
  switch (issue.origin) {
    case 'string':
      return issue.minimum === 1
        ? 'must not be empty'
        : `is ${characters(issue.input)} characters; at least ${limit} are needed`;
    case 'array':
      return `must hold at least ${limit} item${issue.minimum === 1 ? '' : 's'}`;
    default:
      return issue.inclusive === false
        ? `must be greater than ${limit}`
        : `must be at least ${limit}`;
  }
}

/** Counted as zod counts (code points), so the figure matches the limit it checked. */
function characters(value: unknown): number {
  return typeof value === 'string' ? [...value].length : 0;
}

/** zod says "number" for a non-number given to `z.int()`: the model should read "integer". */
function expectedType(
  issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidType>,
): string {
  const def: object | undefined = issue.inst?._zod.def;
  const format = def && 'format' in def ? def.format : undefined;
  if (
    issue.expected === 'number' &&
    typeof format === 'string' &&
    format.includes('int')
  )
    return 'integer';
  switch (issue.expected) {
    case 'int':
      return 'integer';
    case 'record':
      return 'object';
    default:
      return issue.expected;
  }
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function withArticle(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}
