import { PASSWORD_MASK } from '@metatronos/shared-types';
import { maskSecretOccurrences } from '../../settings/secret-occurrences';

/**
 * A server's or library's own text with the given secrets replaced by the mask.
 * Applied to that raw text only, never to our own wording around it: a short
 * password such as "wrong" must not turn "wrong user name or password" into
 * nonsense. The libraries do not echo passwords as far as we know; this is the
 * second guard, since these texts go to the model, the console and the log.
 */
export function maskSecrets(
  text: string,
  secrets: readonly (string | null | undefined)[],
): string {
  return maskSecretOccurrences(text, secrets, PASSWORD_MASK);
}
