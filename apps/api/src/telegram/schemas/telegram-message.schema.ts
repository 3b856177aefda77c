/** Inbound Telegram messages, stored before their update is acknowledged. */
export const TELEGRAM_MESSAGES_COLLECTION = 'telegram_messages';
/** The poller's state: `{ _id: "poller", offset }`. */
export const TELEGRAM_STATE_COLLECTION = 'telegram_state';
