import { estimateCost, formatUsd, priceOf } from './model-prices';

describe('model prices', () => {
  it('knows well-known models, also with a dated or preview suffix', () => {
    expect(priceOf('gpt-4.1-mini')).toEqual({ input: 0.4, output: 1.6 });
    expect(priceOf('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(priceOf('gemini-2.5-flash-preview-05-20')).toEqual({
      input: 0.3,
      output: 2.5,
    });
    // The longer name wins: -mini is its own model, not a suffix of gpt-4o.
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual({
      input: 0.15,
      output: 0.6,
    });
  });

  it('has no price for unknown or endpoint models', () => {
    expect(priceOf('gpt-4o-turbo-custom')).toBeNull();
    expect(priceOf('local/llama3')).toBeNull();
    expect(priceOf('ollama/gpt-4o')).toBeNull();
    expect(estimateCost('mystery-model', 1000, 1000)).toBeNull();
  });

  it('estimates from tokens per million', () => {
    expect(estimateCost('gpt-4.1-mini', 1_000_000, 500_000)).toBeCloseTo(1.2);
    expect(estimateCost('gemini-2.5-flash', 2000, 100)).toBeCloseTo(0.00085);
  });

  it('formats small and large sums', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.00001)).toBe('<$0.0001');
    expect(formatUsd(0.00085)).toBe('$0.0009');
    expect(formatUsd(0.125)).toBe('$0.125');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
  });
});
