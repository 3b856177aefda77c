import { Injectable } from '@nestjs/common';
import {
  ContactChannelProvider,
  ContactSendError,
  type ContactChannel,
} from '../contacts/contact-channel';
import { TelegramBotService } from './telegram-bot.service';
import { TelegramPermissionsService } from './telegram-permissions.service';

/** Longest text contacts_send takes for Telegram (longer texts would be split in several messages). */
const TELEGRAM_CONTACT_MAX_LENGTH = 4096;

/** `tg:<chat id>`: through the Telegram bot, only to chats with reply permission (canReply). */
@ContactChannelProvider()
@Injectable()
export class TelegramContactChannel implements ContactChannel {
  readonly prefix = 'tg';
  readonly label = 'Telegram';
  readonly idExample = 'tg:<chat id>';

  constructor(
    private readonly bot: TelegramBotService,
    private readonly permissions: TelegramPermissionsService,
  ) {}

  get connected(): boolean {
    return this.bot.status === 'connected';
  }

  parseAddress(raw: string): string | null {
    return /^-?[1-9]\d{0,19}$/.test(raw) ? raw : null;
  }

  async send(chatId: string, text: string): Promise<{ to: string }> {
    if (text.length > TELEGRAM_CONTACT_MAX_LENGTH)
      throw new ContactSendError(
        `message_text is too long for Telegram (${text.length} characters; at most ${TELEGRAM_CONTACT_MAX_LENGTH})`,
      );
    if (!this.connected)
      throw new ContactSendError('Telegram is not connected');
    const permission = await this.permissions.findByChatId(chatId);
    if (!permission?.canReply)
      throw new ContactSendError(
        `No reply permission for tg:${chatId}: the owner has not allowed you to message this chat`,
      );
    try {
      await this.bot.sendText(chatId, text);
    } catch (error) {
      throw new ContactSendError((error as Error).message);
    }
    return { to: `tg:${chatId}` };
  }
}
