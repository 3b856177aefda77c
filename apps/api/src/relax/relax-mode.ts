import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../ai-tools/ai-tool';
import {
  PromptSectionProvider,
  type PromptSection,
} from '../system-instruction/prompt-section';

export const RELAX_MODE = 'relax';

/** Seed 003's relax mode: no tools of its own, a calmer Metatron, slower speech in a call. */
@AiModeProvider()
@Injectable()
export class RelaxMode implements AiMode {
  readonly name = RELAX_MODE;
  readonly description =
    'a calm talk to unwind: no tasks, slower and gentler (switch mode to get things done)';
  readonly speechSpeed = 0.85;
}

/** `## Relax Mode`: how to talk while the owner unwinds. */
@PromptSectionProvider()
@Injectable()
export class RelaxPromptSection implements PromptSection {
  readonly id = 'relax-mode';
  readonly order = 55;
  readonly modes = [RELAX_MODE];

  render(): string {
    return [
      '## Relax Mode',
      'The owner wants to unwind. Speak calmly and warmly, in short, unhurried sentences, with pauses.',
      'Do not bring up tasks, mail, schedules or news unless the owner asks; offer a slow breathing',
      'exercise, a quiet story or simply listen. If the owner wants something done, switch to the mode that does it.',
    ].join('\n');
  }
}
