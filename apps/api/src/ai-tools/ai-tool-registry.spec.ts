import { Injectable } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import type { AppSettings } from '../settings/settings.service';
import { AiToolProvider, type AiTool, type AiToolContext } from './ai-tool';
import { AiToolRegistry } from './ai-tool-registry';

const PLAN_ARGS = z.object({
  title: z.string().max(10).describe('A short title'),
  mode: z.enum(['quick', 'slow']).optional(),
  count: z.int().min(1).max(5).optional(),
  ratio: z.number().optional(),
  steps: z
    .array(
      z.strictObject({
        at: z.string().regex(/^\d\d:\d\d$/, { error: 'must match HH:mm' }),
        tags: z.array(z.string()).max(2).optional(),
      }),
    )
    .optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

/** A tool that records what it received, so a test can prove a refused call ran nothing. */
@AiToolProvider()
@Injectable()
class PlanTool implements AiTool<typeof PLAN_ARGS> {
  readonly name = 'plan';
  readonly description = 'Make a plan';
  readonly schema = PLAN_ARGS;
  readonly promptLine = 'make a plan.';
  readonly calls: z.output<typeof PLAN_ARGS>[] = [];

  async execute(args: z.output<typeof PLAN_ARGS>): Promise<string> {
    this.calls.push(args);
    if (args.title === 'boom') throw new Error('The plan exploded');
    return JSON.stringify({ ok: true, title: args.title });
  }
}

@AiToolProvider()
@Injectable()
class HiddenTool implements AiTool {
  readonly name = 'hidden';
  readonly description = 'Never offered';
  readonly schema = z.object({});
  readonly promptLine = 'never offered.';
  isAvailable(): boolean {
    return false;
  }
  async execute(): Promise<string> {
    throw new Error('must not run');
  }
}

const context: AiToolContext = {
  source: 'chat',
  settings: {} as AppSettings,
  chatId: null,
  messageId: null,
  signal: new AbortController().signal,
};

async function registryWith(
  ...tools: (new (...args: never[]) => AiTool)[]
): Promise<AiToolRegistry> {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [AiToolRegistry, ...tools],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(AiToolRegistry);
}

describe('AiToolRegistry', () => {
  let registry: AiToolRegistry;
  let tool: PlanTool;
  beforeAll(async () => {
    registry = await registryWith(PlanTool, HiddenTool);
    tool = (registry as unknown as { tools: Map<string, PlanTool> }).tools.get(
      'plan',
    ) as PlanTool;
  });
  beforeEach(() => {
    tool.calls.length = 0;
  });

  const call = async (name: string, args: unknown) =>
    JSON.parse(await registry.execute(name, args, context)) as Record<
      string,
      unknown
    >;

  describe('refuses arguments the schema does not accept, and runs nothing', () => {
    it.each([
      [
        'a nested field, by its path',
        { title: 'a', steps: [{ at: '09:00' }, { at: '9am' }] },
        "Argument 'steps[1].at' must match HH:mm",
      ],
      [
        'a nested array over its limit',
        { title: 'a', steps: [{ at: '09:00', tags: ['x', 'y', 'z'] }] },
        "Argument 'steps[0].tags' holds 3 items; at most 2 are allowed",
      ],
      [
        'a missing nested field',
        { title: 'a', steps: [{}] },
        "Missing required argument 'steps[0].at'",
      ],
      [
        'an unknown field in a strict nested object',
        { title: 'a', steps: [{ at: '09:00', when: 'now' }] },
        'Argument \'steps[0]\' has an unknown field "when"',
      ],
      [
        'a nested item of the wrong type',
        { title: 'a', steps: ['09:00'] },
        "Argument 'steps[0]' must be an object (got string)",
      ],
      [
        'the wrong type',
        { title: 42 },
        "Argument 'title' must be a string (got number)",
      ],
      [
        'a fraction for an integer',
        { title: 'a', count: 2.5 },
        "Argument 'count' must be an integer (got number)",
      ],
      [
        'an integer as text',
        { title: 'a', count: '3' },
        "Argument 'count' must be an integer (got string)",
      ],
      [
        'a number as text',
        { title: 'a', ratio: '0.5' },
        "Argument 'ratio' must be a number (got string)",
      ],
      [
        'an array for a free-form object',
        { title: 'a', extra: [1] },
        "Argument 'extra' must be an object (got array)",
      ],
      ['a missing argument', {}, "Missing required argument 'title'"],
      [
        'a value outside the enum',
        { title: 'a', mode: 'fast' },
        "Argument 'mode' must be one of: quick, slow",
      ],
      [
        'a text over its limit',
        { title: 'x'.repeat(11) },
        "Argument 'title' is 11 characters; the limit is 10",
      ],
      [
        'a number over its maximum',
        { title: 'a', count: 6 },
        "Argument 'count' must be at most 5",
      ],
      [
        'a number under its minimum',
        { title: 'a', count: 0 },
        "Argument 'count' must be at least 1",
      ],
      [
        'arguments that are not an object',
        [1],
        'Arguments must be a JSON object',
      ],
      [
        'several problems at once, each named',
        { title: 7, count: 9 },
        "Argument 'title' must be a string (got number); Argument 'count' must be at most 5",
      ],
    ])('%s', async (_case, args, error) => {
      expect(await call('plan', args)).toEqual({ error });
      expect(tool.calls).toEqual([]);
    });
  });

  it('hands the handler the parsed arguments: unknown fields dropped, a null argument counts as omitted', async () => {
    expect(
      await call('plan', {
        title: 'Trip',
        mode: null,
        steps: [{ at: '07:15' }],
        surprise: true,
      }),
    ).toEqual({ ok: true, title: 'Trip' });
    expect(tool.calls).toEqual([{ title: 'Trip', steps: [{ at: '07:15' }] }]);
    expect(await call('plan', { title: null })).toEqual({
      error: "Missing required argument 'title'",
    });
  });

  it('answers an unknown or unavailable tool with an error and runs nothing', async () => {
    expect(await call('nope', {})).toEqual({
      error: "Unknown or unavailable tool 'nope'",
    });
    expect(await call('hidden', {})).toEqual({
      error: "Unknown or unavailable tool 'hidden'",
    });
  });

  it('turns a thrown error into the tool error', async () => {
    expect(await call('plan', { title: 'boom' })).toEqual({
      error: 'The plan exploded',
    });
  });

  it('tells the provider the JSON Schema generated from the zod schema, in the portable subset', async () => {
    const [spec] = await registry.specs({
      source: 'chat',
      settings: {} as AppSettings,
    });
    expect(spec).toEqual({
      name: 'plan',
      description: 'Make a plan',
      parameters: {
        type: 'object',
        properties: {
          title: {
            type: 'string',
            maxLength: 10,
            description: 'A short title',
          },
          mode: { type: 'string', enum: ['quick', 'slow'] },
          count: { type: 'integer', minimum: 1, maximum: 5 },
          ratio: { type: 'number' },
          steps: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                at: { type: 'string', pattern: '^\\d\\d:\\d\\d$' },
                tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
              },
              required: ['at'],
            },
          },
          extra: { type: 'object' },
        },
        required: ['title'],
      },
    });
  });

  it.each([
    [
      'a union',
      z.union([z.string(), z.object({ a: z.string() })]),
      "Tool 'odd': the JSON Schema keyword 'anyOf' (at '/value') is not accepted by every provider",
    ],
    [
      'a list of types',
      z.union([z.string(), z.number()]),
      "Tool 'odd': a list of types (at '/value') is not accepted by every provider",
    ],
    [
      'a constant',
      z.literal('on'),
      "Tool 'odd': the JSON Schema keyword 'const' (at '/value') is not accepted by every provider",
    ],
  ])(
    'refuses at start-up a tool whose schema needs %s, which not every provider accepts',
    async (_case, value, message) => {
      @AiToolProvider()
      @Injectable()
      class OddTool implements AiTool {
        readonly name = 'odd';
        readonly description = 'Takes an odd value';
        readonly schema = z.object({ value });
        readonly promptLine = 'odd.';
        async execute(): Promise<string> {
          return '{}';
        }
      }
      await expect(registryWith(OddTool)).rejects.toThrow(message);
    },
  );
});
