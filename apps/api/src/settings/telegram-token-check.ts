import { maskSecretOccurrences } from './secret-occurrences';

const TELEGRAM_CHECK_TIMEOUT_MS = 10_000;

/**
 * Asks the Bot API who the token belongs to (`getMe`, at the configured API
 * root, so a local Bot API server or the test fake answers). `null` when the
 * token works, else why not, in words for the owner and without the token: a
 * token is saved only once it works, as accounts are.
 */
export async function telegramTokenProblem(
  apiRoot: string,
  token: string,
): Promise<string | null> {
  const hide = (text: string) => maskSecretOccurrences(text, [token], '••••');
  let response: Response;
  try {
    response = await fetch(`${apiRoot}/bot${token}/getMe`, {
      method: 'POST',
      signal: AbortSignal.timeout(TELEGRAM_CHECK_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    const timedOut = (error as { name?: string }).name === 'TimeoutError';
    return hide(
      `The Telegram bot token could not be checked: ${apiRoot} ${timedOut ? 'did not answer in time' : `could not be reached${typeof cause === 'string' ? ` (${cause})` : ''}`}. Nothing was saved.`,
    );
  }
  let body: { ok?: unknown; description?: unknown; result?: unknown } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    /* not JSON: judged by the status below */
  }
  if (response.ok && body.ok === true) return null;
  const said =
    typeof body.description === 'string' && body.description
      ? hide(body.description.slice(0, 200))
      : `HTTP ${response.status}`;
  if (response.status === 401 || response.status === 404)
    return `Telegram refused the bot token (${said}): copy it again from BotFather. Nothing was saved.`;
  return `The Telegram bot token could not be checked: ${apiRoot} answered ${said}. Nothing was saved.`;
}
