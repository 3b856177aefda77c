/** Why a turn could not start or did not finish, in words for the owner. */
export type TurnErrorKind =
  | 'not-configured'
  | 'provider'
  | 'timeout'
  | 'stopped'
  | 'tool-cap'
  /** A job's own token limit per run (`maxTokensPerRun`) stopped the turn before its next call. */
  | 'run-tokens'
  /** A spend cap, the pause after a provider's 402, or an unpriced model stopped the turn before a call. */
  | 'budget'
  | 'internal';

export class TurnError extends Error {
  constructor(
    readonly kind: TurnErrorKind,
    message: string,
    /** For `budget`: whether any model call of the turn had gone out before it stopped. */
    readonly providerCalled = true,
  ) {
    super(message);
    this.name = 'TurnError';
  }
}
