import {
  Logger,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type {
  AppEventMap,
  MessageAuthor,
  WhatsAppPermission,
} from '@metatronos/shared-types';
import { BudgetService } from '../../budget/budget.service';
import { ChatReplyService } from '../../chats/chat-reply.service';
import { ChatsService } from '../../chats/chats.service';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import {
  ContactAutoReply,
  type ContactChannelPort,
  type InboundMessage,
} from '../../channels/contact-auto-reply';
import { WhatsAppGateway, phoneDigits } from '../gateway/whatsapp-gateway';
import { WhatsAppPermissionsService } from '../permissions/whatsapp-permissions.service';
import { autoReplyContext } from './auto-reply-profile';
import { WhatsAppAutoReplySettings } from './whatsapp-auto-reply.settings';

export const WHATSAPP_MESSAGES_COLLECTION = 'whatsapp_messages';

interface StoredWhatsAppMessage extends InboundMessage {
  from: string;
  fromName: string | null;
  fromMe: boolean;
  isGroup: boolean;
  /** The contact's digits: one serial queue per phone. */
  phone: string;
}

/**
 * The seed's auto-reply on WhatsApp: every inbound message from a contact with
 * `canRead` becomes a turn in the contact's chat ("WhatsApp: <name>"), and the
 * answer goes back to the sender when `canReply`. The pipeline (queues, claims,
 * crash recovery, limits, delivery marks) is the one every channel shares:
 * `ContactAutoReply`; this class is WhatsApp's port to it.
 */
@Injectable()
export class WhatsAppAutoReplyService
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnModuleDestroy
{
  private readonly logger = new Logger(WhatsAppAutoReplyService.name);
  private readonly pipeline: ContactAutoReply<
    StoredWhatsAppMessage,
    WhatsAppPermission
  >;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    @InjectConnection() connection: Connection,
    private readonly gateway: WhatsAppGateway,
    permissions: WhatsAppPermissionsService,
    chats: ChatsService,
    replies: ChatReplyService,
    clock: Clock,
    private readonly emitter: EventEmitter2,
    settings: WhatsAppAutoReplySettings,
    budget: BudgetService,
    appEvents: AppEventBus,
  ) {
    const port: ContactChannelPort<StoredWhatsAppMessage, WhatsAppPermission> =
      {
        channel: 'whatsapp',
        label: 'WhatsApp',
        collection: WHATSAPP_MESSAGES_COLLECTION,
        contactField: 'phone',
        isConnected: () => gateway.status === 'connected',
        skipReason: (message) =>
          message.fromMe || message.isGroup ? 'own or group message' : null,
        findContact: (phone) => permissions.findByPhone(phone),
        setChatId: (phone, chatId) => permissions.setChatId(phone, chatId),
        pauseAutoReply: (phone, until) =>
          permissions.pauseAutoReply(phone, until),
        send: async (message, text) => {
          // The contact's next message need not wait for the sent one to be stored.
          const { stored } = await gateway.sendText(message.phone, text, {
            storeInBackground: true,
          });
          return { settled: stored };
        },
        promptContext: (permission) => autoReplyContext(permission),
        author: (permission): MessageAuthor => ({
          kind: 'contact',
          channel: 'whatsapp',
          name: permission.displayName,
          phone: permission.phoneNumber,
        }),
        describe: (permission, phone) =>
          `${permission.displayName} (+${phone})`,
      };
    this.pipeline = new ContactAutoReply(port, {
      connection,
      chats,
      replies,
      clock,
      limits: settings,
      budget,
      events: appEvents,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const onMessage = ({ message }: AppEventMap['whatsapp.message']) => {
      if (message.fromMe || message.isGroup) return;
      this.pipeline.enqueue(phoneDigits(message.from), message.id);
    };
    const onStatus = ({ status }: AppEventMap['whatsapp.status']) => {
      if (status === 'connected') void this.pipeline.scan();
    };
    // Caps raised, a pause resumed, a new day: messages the budget held back are taken again.
    // A budget notice (80% / 100% of a cap, a pause) also goes to the owner's own chat, once per cap and period.
    const onBudget = ({ message }: AppEventMap['budget.changed']) => {
      if (this.gateway.status !== 'connected') return;
      void this.pipeline.scan();
      const own = this.gateway.phoneNumber;
      if (message && own)
        this.gateway
          .sendText(own, `Metatron budget: ${message}`)
          .catch((error: Error) =>
            this.logger.warn(
              `Could not send the budget notice to your own chat: ${error.message}`,
            ),
          );
    };
    this.emitter.on('whatsapp.message', onMessage);
    this.emitter.on('whatsapp.status', onStatus);
    this.emitter.on('budget.changed', onBudget);
    this.unsubscribe.push(
      () => this.emitter.off('whatsapp.message', onMessage),
      () => this.emitter.off('whatsapp.status', onStatus),
      () => this.emitter.off('budget.changed', onBudget),
    );
    await this.pipeline.recover();
    if (this.gateway.status === 'connected') await this.pipeline.scan();
  }

  /** Stops taking messages off the queues: what is not claimed yet stays `pending` for the next start. */
  async beforeApplicationShutdown(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    await this.pipeline.close();
  }

  async onModuleDestroy(): Promise<void> {
    await this.pipeline.close();
  }

  /** Resolves once every queue is empty (tests, the bench, shutdown). */
  idle(): Promise<void> {
    return this.pipeline.idle();
  }

  /** Contacts' turns running now (at most `AUTO_REPLY_CONCURRENCY`). */
  get turnsRunning(): number {
    return this.pipeline.turnsRunning;
  }
}
