import { ChangeDetectionStrategy, Component } from '@angular/core';
import { WhatsAppCard } from '../tools/whatsapp-card';
import { TelegramCard } from './telegram-card';

/** `/channels`: the messaging channels Metatron reads and answers, side by side. */
@Component({
  selector: 'mt-channels-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [WhatsAppCard, TelegramCard],
  template: `
    <header class="header">
      <div>
        <h1 class="title">Channels</h1>
        <p class="subtitle">
          Where people can reach Metatron. Only the chats you allow are read and
          answered; everyone else is listed for you and never answered.
        </p>
      </div>
    </header>
    <div class="sections" data-testid="channel-sections">
      <section aria-labelledby="whatsapp-heading"><mt-whatsapp-card /></section>
      <section aria-labelledby="telegram-heading"><mt-telegram-card /></section>
    </div>
  `,
  styleUrl: './channels-page.scss',
})
export class ChannelsPage {}
