import type { PendingActionView } from '@metatronos/shared-types';

/** Test data: a WhatsApp message a tainted chat turn proposed, waiting for the owner. */
export function pendingAction(
  id: string,
  extra: Partial<PendingActionView> = {},
): PendingActionView {
  return {
    id,
    tool: 'whatsapp_send_message',
    summary: `Send “Here are the notes” to Anna (+49 170 1234567) on WhatsApp (${id})`,
    arguments: { to: '+491701234567', text: 'Here are the notes' },
    chatId: 'chat-1',
    messageId: 'm2',
    jobId: null,
    source: 'chat',
    tainted: true,
    taint: [
      {
        by: 'url_fetch',
        text: 'a web page from example.org',
        at: '2026-11-28T09:00:00.000Z',
      },
    ],
    reason: {
      kind: 'tainted',
      text: 'this turn read a web page from example.org',
    },
    effect: 'send',
    status: 'pending',
    result: null,
    error: null,
    createdAt: '2026-11-28T09:00:00.000Z',
    updatedAt: '2026-11-28T09:00:00.000Z',
    expiresAt: '2026-11-29T09:00:00.000Z',
    ...extra,
  };
}
