import { Injectable } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import type { AppSettings } from '../settings/settings.service';
import {
  AiModeProvider,
  AiToolProvider,
  META_MODE,
  type AiMode,
  type AiTool,
  type AiToolContext,
} from './ai-tool';
import { AiToolRegistry, checkModes } from './ai-tool-registry';
import { DataMode, DefaultMode } from './modes/core-modes';

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
  readonly modes = ['default'];
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
  readonly modes = ['default'];
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
  ...tools: (new (...args: never[]) => AiTool | AiMode)[]
): Promise<AiToolRegistry> {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [AiToolRegistry, DefaultMode, DataMode, ...tools],
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
        readonly modes = ['default'];
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

/** A tool for the mode checks: `name` in `modes`. */
function toolIn(name: string, ...modes: string[]): AiTool {
  return {
    name,
    modes,
    description: name,
    schema: z.object({}),
    promptLine: name,
    execute: async () => '{}',
  };
}

const mode = (name: string, description = `the ${name} things`): AiMode => ({
  name,
  description,
});

describe('modes checked at start-up', () => {
  const modes = [mode('default'), mode('data'), mode('web')];
  const meta = [
    toolIn('set_mode', META_MODE),
    toolIn('select_account', META_MODE),
  ];

  it('accepts the default mode at 6 tools and any other at 8, meta tools counted', () => {
    expect(() =>
      checkModes(modes, [
        ...meta,
        ...['a', 'b', 'c', 'd'].map((n) => toolIn(n, 'default')),
        ...['e', 'f', 'g', 'h', 'i', 'j'].map((n) => toolIn(n, 'data')),
      ]),
    ).not.toThrow();
  });

  it('refuses a 7th tool in the default mode', () => {
    expect(() =>
      checkModes(modes, [
        ...meta,
        ...['a', 'b', 'c', 'd', 'e'].map((n) => toolIn(n, 'default')),
      ]),
    ).toThrow(
      "Mode 'default' has 7 tools (meta tools included); the limit is 6",
    );
  });

  it('refuses a 9th tool in any mode, counting a tool in two modes in both', () => {
    expect(() =>
      checkModes(modes, [
        ...meta,
        ...['a', 'b', 'c', 'd', 'e'].map((n) => toolIn(n, 'web')),
        toolIn('both', 'web', 'data'),
        toolIn('z', 'web'),
      ]),
    ).toThrow("Mode 'web' has 9 tools (meta tools included); the limit is 8");
  });

  it.each([
    [[toolIn('x', 'mail')], "Tool 'x' names an unknown mode 'mail'"],
    [[toolIn('x')], "Tool 'x' names no mode (set its 'modes')"],
  ])('refuses a tool outside the known modes (%#)', (tools, message) => {
    expect(() => checkModes(modes, tools)).toThrow(message);
  });

  it.each([
    [[mode('default'), mode('Web')], "Mode name 'Web' is not valid"],
    [[mode('default'), mode('web'), mode('web')], "Two modes are named 'web'"],
    [[mode('data')], "No 'default' mode is registered"],
    [
      [mode('default', 'two\nlines')],
      "Mode 'default' needs a one-line description",
    ],
  ])('refuses bad modes (%#)', (list, message) => {
    expect(() => checkModes(list, [toolIn('x', 'default')])).toThrow(message);
  });

  it('fails the app start when a contributed tool names an unknown mode', async () => {
    @AiToolProvider()
    @Injectable()
    class StrayTool implements AiTool {
      readonly name = 'stray';
      readonly modes = ['nowhere'];
      readonly description = 'Stray';
      readonly schema = z.object({});
      readonly promptLine = 'stray.';
      async execute(): Promise<string> {
        return '{}';
      }
    }
    await expect(registryWith(StrayTool)).rejects.toThrow(
      "Tool 'stray' names an unknown mode 'nowhere'",
    );
  });

  it('lists the contributed modes, the default first, each with its tools, and offers a mode its tools only', async () => {
    @AiModeProvider()
    @Injectable()
    class WebTestMode implements AiMode {
      readonly name = 'web';
      readonly description = 'the web';
    }
    @AiToolProvider()
    @Injectable()
    class LookTool implements AiTool {
      readonly name = 'look';
      readonly modes = ['web'];
      readonly description = 'Look';
      readonly schema = z.object({});
      readonly promptLine = 'look.';
      async execute(): Promise<string> {
        return '{}';
      }
    }
    const registry = await registryWith(PlanTool, LookTool, WebTestMode);
    expect(registry.modes().map((m) => m.name)).toEqual([
      'default',
      'data',
      'web',
    ]);
    expect(
      registry
        .modeTools()
        .map((m) => [m.mode.name, m.tools.map((t) => t.name)]),
    ).toEqual([
      ['default', ['plan']],
      ['data', []],
      ['web', ['look']],
    ]);
    expect(registry.modesOf('look')).toEqual(['web']);
    const offered = await registry.toolsFor(context, { mode: 'web' });
    expect(offered.map((t) => t.name)).toEqual(['look']);
    // A switched-off tool is not offered, and a call of it runs nothing.
    const off = {
      ...context,
      settings: { disabledTools: ['plan'] } as unknown as AppSettings,
    };
    expect(
      (await registry.toolsFor(off, { mode: 'default' })).map((t) => t.name),
    ).toEqual([]);
    expect(
      JSON.parse(await registry.execute('plan', { title: 'x' }, off)),
    ).toEqual({
      error: "Unknown or unavailable tool 'plan'",
    });
  });

  it("keeps its mode lists while nothing changes and follows a source's modes and tools when they do", async () => {
    const registry = await registryWith(PlanTool);
    let sourceModes: AiMode[] = [];
    let sourceTools: AiTool[] = [];
    registry.useToolSource({
      // New objects on every read, as the MCP servers give them.
      modes: () => sourceModes.map((m) => ({ ...m })),
      tools: () => [...sourceTools],
    });
    const names = () => registry.modes().map((m) => m.name);
    const listed = () =>
      registry
        .modeTools()
        .map((m) => `${m.mode.name}: ${m.tools.map((t) => t.name).join()}`);
    expect(registry.modes()).toBe(registry.modes());
    expect(registry.modeTools()).toBe(registry.modeTools());
    expect(names()).toEqual(['default', 'data']);

    sourceModes = [mode('mcp_b', 'two tools'), mode('mcp_a', 'one tool')];
    sourceTools = [toolIn('b_find', 'mcp_b')];
    expect(names()).toEqual(['default', 'data', 'mcp_a', 'mcp_b']);
    expect(listed()).toEqual([
      'default: plan',
      'data: ',
      'mcp_a: ',
      'mcp_b: b_find',
    ]);
    expect(registry.modes()).toBe(registry.modes());

    // The same names with another description, then a tool added: both seen.
    sourceModes = [mode('mcp_b', 'three tools'), mode('mcp_a', 'one tool')];
    expect(registry.modes().find((m) => m.name === 'mcp_b')?.description).toBe(
      'three tools',
    );
    sourceTools = [toolIn('b_find', 'mcp_b'), toolIn('a_get', 'mcp_a')];
    expect(listed()).toEqual([
      'default: plan',
      'data: ',
      'mcp_a: a_get',
      'mcp_b: b_find',
    ]);
    sourceModes = [];
    sourceTools = [];
    expect(names()).toEqual(['default', 'data']);
    expect(listed()).toEqual(['default: plan', 'data: ']);
  });

  it('asks every tool that answers later at once and keeps the order of those that answer at once', async () => {
    const registry = await registryWith(PlanTool);
    const answers: Array<(ok: boolean) => void> = [];
    const later = (name: string): AiTool => ({
      ...toolIn(name, 'data'),
      isAvailable: () => new Promise<boolean>((r) => answers.push(r)),
    });
    const now = (name: string, ok: boolean): AiTool => ({
      ...toolIn(name, 'data'),
      isAvailable: () => ok,
    });
    registry.useToolSource({
      modes: () => [],
      tools: () => [
        later('l1'),
        now('n1', true),
        later('l2'),
        now('n2', false),
        now('n3', true),
      ],
    });
    const listed = registry.available(context);
    await Promise.resolve();
    expect(answers).toHaveLength(2);
    answers[1](true);
    answers[0](false);
    expect((await listed).map((t) => t.name)).toEqual([
      'plan',
      'n1',
      'l2',
      'n3',
    ]);
    const failing = new AiToolRegistry(
      (registry as unknown as { discovery: never }).discovery,
    );
    failing.useToolSource({
      modes: () => [],
      tools: () => [
        {
          ...toolIn('x', 'data'),
          isAvailable: () => Promise.reject(new Error('down')),
        },
      ],
    });
    await expect(failing.available(context)).rejects.toThrow('down');
  });
});
