import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../ai-tools/ai-tool';

/** Scheduled jobs and the Pulse: their tools and the Pulse status sections. */
@AiModeProvider()
@Injectable()
export class AutomationsMode implements AiMode {
  readonly name = 'automations';
  readonly description = 'scheduled jobs and the Pulse heartbeat';
}
