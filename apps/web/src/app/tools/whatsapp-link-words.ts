import type {
  WhatsAppLinkProblem,
  WhatsAppStatus,
  WhatsAppStatusView,
} from '@metatronos/shared-types';

/** The link's state in plain words: a short label for the status chip, and what happened (null when all is well). */
export interface WhatsAppLinkWords {
  label: string;
  detail: string | null;
  /** The server is retrying by itself: no QR code is coming until it gets through. */
  reconnecting: boolean;
}

const STATUS_LABELS: Record<WhatsAppStatus, string> = {
  disconnected: 'Disconnected',
  connecting: 'Connecting…',
  qr_ready: 'Scan the QR code',
  connected: 'Connected',
};

/** What happened, for the problems after which the server reconnects by itself. */
const RECONNECT_DETAILS: Record<
  Exclude<WhatsAppLinkProblem, 'logged_out' | 'forbidden'>,
  string
> = {
  connection_lost:
    'The connection to WhatsApp was lost (no answer in time). This is usually the network of the server.',
  connection_closed: 'WhatsApp closed the connection.',
  connection_replaced:
    'This link was opened somewhere else with the same session (another MetatronOS, or a copy of its data).',
  bad_session:
    'WhatsApp could not read the saved session. If this keeps happening, disconnect with “clear the saved session” and link again.',
  multidevice_mismatch:
    'WhatsApp on the phone does not match this linked device: update WhatsApp on the phone.',
  service_unavailable: "WhatsApp's servers are not available right now.",
  unreachable:
    "The server can't reach WhatsApp: check its internet connection.",
  closed: 'The connection to WhatsApp closed.',
};

/**
 * Puts the status and the server's reason code into words. An unknown code (a newer server) falls back to
 * the server's own reason text.
 */
export function whatsAppLinkWords(
  view: WhatsAppStatusView | null,
  formattedPhone: string | null,
): WhatsAppLinkWords {
  const status = view?.status ?? 'disconnected';
  const problem = view?.problem ?? null;
  const reason = view?.reason ?? null;
  if (status === 'connected')
    return {
      label: formattedPhone ? `Connected as ${formattedPhone}` : 'Connected',
      detail: null,
      reconnecting: false,
    };
  if (problem === 'logged_out')
    return {
      label: 'Logged out on the phone — link again',
      detail:
        'This device was removed under Linked devices on the phone, or WhatsApp logged it out. Link device shows a new QR code to scan.',
      reconnecting: false,
    };
  if (problem === 'forbidden')
    return {
      label: 'WhatsApp refused this account',
      detail:
        'WhatsApp does not let this account use linked devices right now. Check WhatsApp on the phone before you link again.',
      reconnecting: false,
    };
  if (status === 'connecting' && (problem || reason)) {
    const detail =
      (problem && problem in RECONNECT_DETAILS
        ? RECONNECT_DETAILS[problem as keyof typeof RECONNECT_DETAILS]
        : null) ?? reason;
    return { label: 'Reconnecting to WhatsApp…', detail, reconnecting: true };
  }
  return {
    label: STATUS_LABELS[status],
    detail: status === 'disconnected' ? reason : null,
    reconnecting: false,
  };
}
