import {
  DEFAULT_BUDGET,
  DEFAULT_OUTPUT_LIMITS,
} from '@metatronos/shared-types';
import {
  nextBudget,
  nextModelPrices,
  nextOutputLimits,
  storedSpendSettings,
} from './budget-settings';
import { costOf, priceFor, worstCaseCost } from './model-prices';

describe('spend settings', () => {
  it.each([
    [{ dailyUsd: 3 }, { ...DEFAULT_BUDGET, dailyUsd: 3 }],
    [{ dailyUsd: '3.5' }, { ...DEFAULT_BUDGET, dailyUsd: 3.5 }],
    [{ monthlyUsd: 0 }, { ...DEFAULT_BUDGET, monthlyUsd: 0 }],
    [
      { unattendedDailyUsd: null },
      { ...DEFAULT_BUDGET, unattendedDailyUsd: null },
    ],
    [{ dailyUsd: 10_000 }, { ...DEFAULT_BUDGET, dailyUsd: 10_000 }],
  ])('accepts the caps %j', (input, expected) => {
    const problems: string[] = [];
    expect(nextBudget(input, DEFAULT_BUDGET, problems)).toEqual(expected);
    expect(problems).toEqual([]);
  });

  it.each([
    [{ dailyUsd: -0.01 }],
    [{ dailyUsd: 10_000.01 }],
    [{ dailyUsd: '1e3' }],
    [{ dailyUsd: 'five' }],
    [{ dailyUsd: true }],
    [{ dailyUsd: Infinity }],
    [{ dailyUsd: [1] }],
    [{ yearlyUsd: 1 }],
    [null],
    ['5'],
  ])('refuses the caps %j', (input) => {
    const problems: string[] = [];
    nextBudget(input, DEFAULT_BUDGET, problems);
    expect(problems.length).toBeGreaterThan(0);
  });

  it('refuses bad prices and duplicates, keeps good ones', () => {
    const problems: string[] = [];
    const prices = nextModelPrices(
      [
        { model: 'gpt-4.1-mini', inputPerMTok: 1, outputPerMTok: 2 },
        { model: 'GPT-4.1-mini', inputPerMTok: 1, outputPerMTok: 2 },
        { model: 'x', inputPerMTok: 1, outputPerMTok: 2, tip: 1 },
        {
          model: 'y',
          inputPerMTok: 1,
          outputPerMTok: 2,
          cachedInputPerMTok: -1,
        },
      ],
      problems,
    );
    expect(prices[0]).toEqual({
      model: 'gpt-4.1-mini',
      inputPerMTok: 1,
      outputPerMTok: 2,
    });
    expect(problems).toEqual([
      "modelPrices has two entries for 'GPT-4.1-mini'",
      'modelPrices[2].tip is not a price field',
      expect.stringContaining(
        'modelPrices[3].cachedInputPerMTok must be a number',
      ),
    ]);
  });

  it('keeps output limits within bounds', () => {
    const problems: string[] = [];
    expect(
      nextOutputLimits({ job: 512 }, DEFAULT_OUTPUT_LIMITS, problems),
    ).toEqual({
      ...DEFAULT_OUTPUT_LIMITS,
      job: 512,
    });
    nextOutputLimits({ job: 1.5, chat: 10 }, DEFAULT_OUTPUT_LIMITS, problems);
    expect(problems).toHaveLength(2);
  });

  it('gives an install without caps the default ones, and keeps an explicit "no cap"', () => {
    expect(storedSpendSettings(null).budget).toEqual(DEFAULT_BUDGET);
    expect(storedSpendSettings({}).budget).toEqual(DEFAULT_BUDGET);
    expect(storedSpendSettings({ budget: { dailyUsd: null } }).budget).toEqual({
      ...DEFAULT_BUDGET,
      dailyUsd: null,
    });
  });
});

describe('prices', () => {
  it.each([
    ['gpt-4.1-mini', 'openai', 'gpt-4.1-mini'],
    ['gpt-4.1-mini-2025-04-14', 'openai', 'gpt-4.1-mini'],
    ['gpt-4.1', 'openai', 'gpt-4.1'],
    ['gemini-2.5-flash-lite', 'gemini', 'gemini-2.5-flash-lite'],
    ['gemini-2.5-flash-preview-09-2025', 'gemini', 'gemini-2.5-flash'],
    ['ollama/llama3.2', 'openai-compatible', '*'],
    ['gpt-4.1-minimal', 'openai', null],
    ['gpt-5-pro', 'openai', null],
    ['gpt-4o-2024-08-06', 'openai', 'gpt-4o'],
    ['gemini-2.0-flash-001', 'gemini', 'gemini-2.0-flash'],
    ['gemini-3-pro-preview', 'gemini', 'gemini-3-pro'],
    ['gpt-unknown', 'openai', null],
  ] as const)('%s (%s) is priced as %s', (model, provider, expected) => {
    expect(priceFor(model, provider, [])?.price.model ?? null).toBe(expected);
  });

  it("prefers the owner's price, also for an endpoint's model", () => {
    const own = [
      { model: 'ollama/llama3.2', inputPerMTok: 1, outputPerMTok: 2 },
    ];
    expect(priceFor('ollama/llama3.2', 'openai-compatible', own)?.price).toBe(
      own[0],
    );
  });

  it('prices cached input at its own price', () => {
    const price = {
      model: 'm',
      inputPerMTok: 2,
      cachedInputPerMTok: 0.5,
      outputPerMTok: 8,
    };
    expect(
      costOf(
        {
          inputTokens: 1_000_000,
          cachedInputTokens: 400_000,
          outputTokens: 100_000,
        },
        price,
      ),
    ).toBeCloseTo(1.2 + 0.2 + 0.8, 9);
  });

  const realtime = {
    model: 'gpt-realtime',
    inputPerMTok: 4,
    cachedInputPerMTok: 0.4,
    outputPerMTok: 16,
    audioInputPerMTok: 32,
    audioOutputPerMTok: 64,
  };

  it.each([
    [
      'text and audio in and out, uncached',
      {
        inputTokens: 300,
        audioInputTokens: 200,
        outputTokens: 100,
        audioOutputTokens: 80,
      },
      100 * 4 + 200 * 32 + 20 * 16 + 80 * 64,
    ],
    [
      'cached audio as reported',
      {
        inputTokens: 1000,
        audioInputTokens: 600,
        cachedInputTokens: 500,
        cachedAudioInputTokens: 300,
        outputTokens: 0,
      },
      200 * 4 + 300 * 32 + 500 * 0.4,
    ],
    [
      'cached tokens not split: text first',
      {
        inputTokens: 1000,
        audioInputTokens: 600,
        cachedInputTokens: 500,
        outputTokens: 0,
      },
      // 400 text all cached, 100 of 600 audio cached.
      500 * 32 + 500 * 0.4,
    ],
  ])('prices a voice response: %s', (_what, usage, microUsd) => {
    expect(costOf(usage, realtime)).toBeCloseTo(microUsd / 1_000_000, 12);
  });

  it('prices audio at the text prices when the model has no audio price', () => {
    expect(
      costOf(
        {
          inputTokens: 1_000_000,
          audioInputTokens: 1_000_000,
          outputTokens: 0,
        },
        { model: 'm', inputPerMTok: 2, outputPerMTok: 8 },
      ),
    ).toBeCloseTo(2, 9);
  });

  it("takes a voice response's worst case at the dearer of the text and audio prices", () => {
    expect(worstCaseCost(1_000, 1_000, realtime, true)).toBeCloseTo(
      (1_000 * 32 + 1_000 * 64) / 1_000_000,
      12,
    );
    expect(worstCaseCost(1_000, 1_000, realtime)).toBeCloseTo(
      (1_000 * 4 + 1_000 * 16) / 1_000_000,
      12,
    );
  });
});
