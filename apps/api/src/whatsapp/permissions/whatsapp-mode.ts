import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../../ai-tools/ai-tool';

@AiModeProvider()
@Injectable()
export class WhatsAppMode implements AiMode {
  readonly name = 'whatsapp';
  readonly description = 'WhatsApp messages and contact permissions';
}
