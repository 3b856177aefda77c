import { LlmProviderError } from '../llm/llm-adapter';

/** A model call the budget did not let out, with the owner-readable reason. */
export class BudgetRefusal extends LlmProviderError {
  constructor(
    message: string,
    /** Model calls of the turn that went out before this one was refused. */
    readonly callsBefore: number,
    /** `tokens`: the run's own token limit (a job's `maxTokensPerRun`) stopped it, not a cap. */
    readonly runLimit: 'tokens' | null = null,
  ) {
    super('budget', message);
    this.name = 'BudgetRefusal';
  }
}

/** $5 → "$5.00"; below a cent, "$0.0042". */
export function dollars(usd: number): string {
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
