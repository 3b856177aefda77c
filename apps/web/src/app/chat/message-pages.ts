import type { ChatMessage } from '@metatronos/shared-types';

/** Messages are fetched in pages of this many (`?limit=`); a full page means there may be older ones. */
export const MESSAGE_PAGE_SIZE = 50;

/** Ids of messages shown before the server stored them (the optimistic user message). */
export const LOCAL_ID_PREFIX = 'local-';

export function isLocalMessage(message: ChatMessage): boolean {
  return message.id.startsWith(LOCAL_ID_PREFIX);
}

/**
 * The view after fetching the latest page again: the fresh page replaces what it covers; older messages the
 * owner had loaded with "Load earlier" stay above it. Local (not yet stored) messages are dropped.
 */
export function mergeLatestPage(
  current: ChatMessage[],
  page: ChatMessage[],
): ChatMessage[] {
  if (page.length < MESSAGE_PAGE_SIZE) return page;
  const fresh = new Set(page.map((message) => message.id));
  const firstAt = page[0].createdAt;
  const older = current.filter(
    (message) =>
      !isLocalMessage(message) &&
      !fresh.has(message.id) &&
      message.createdAt < firstAt,
  );
  return [...older, ...page];
}

/** Prepends an older page, skipping messages already shown. */
export function prependPage(
  current: ChatMessage[],
  page: ChatMessage[],
): ChatMessage[] {
  const shown = new Set(current.map((message) => message.id));
  return [...page.filter((message) => !shown.has(message.id)), ...current];
}
