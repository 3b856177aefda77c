/** Why a turn could not start or did not finish, in words for the owner. */
export type TurnErrorKind =
  | 'not-configured'
  | 'provider'
  | 'timeout'
  | 'stopped'
  | 'tool-cap'
  | 'internal';

export class TurnError extends Error {
  constructor(
    readonly kind: TurnErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'TurnError';
  }
}
