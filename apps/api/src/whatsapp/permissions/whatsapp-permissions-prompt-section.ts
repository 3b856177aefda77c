import { Injectable } from '@nestjs/common';
import {
  PromptSectionProvider,
  type PromptSection,
} from '../../system-instruction/prompt-section';
import { OWNER_AND_UNATTENDED } from '../../system-instruction/prompt-audience';
import { WhatsAppLink } from './whatsapp-link';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';

/** `## WhatsApp Permissions`: a live snapshot of every permission, in the whatsapp mode while WhatsApp is connected. */
@PromptSectionProvider()
@Injectable()
export class WhatsAppPermissionsPromptSection implements PromptSection {
  readonly id = 'whatsapp-permissions';
  readonly order = 60;
  readonly audiences = OWNER_AND_UNATTENDED;
  readonly modes = ['whatsapp'];

  constructor(
    private readonly link: WhatsAppLink,
    private readonly permissions: WhatsAppPermissionsService,
  ) {}

  async render(): Promise<string | null> {
    if (!this.link.connected) return null;
    const list = await this.permissions.list();
    const linked = this.link.phoneNumber
      ? ` (linked number ${this.link.phoneNumber})`
      : '';
    const lines = list.map(
      (p) =>
        `- ${p.displayName.replace(/\s+/g, ' ')} (${p.phoneNumber}): canRead=${p.canRead}, canReply=${p.canReply}, trusted=${p.trusted}`,
    );
    return [
      '## WhatsApp Permissions',
      `WhatsApp is connected${linked}. Contacts without a record here are invisible to you: you cannot read from or send to them.`,
      ...(lines.length ? lines : ['- No contacts have permissions yet.']),
      'Contacts with canReply=true receive automatic replies from you to their incoming messages.',
    ].join('\n');
  }
}
