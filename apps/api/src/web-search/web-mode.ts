import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../ai-tools/ai-tool';

/** The web: search (and the toolbelt's page fetch, which joins this mode). */
@AiModeProvider()
@Injectable()
export class WebMode implements AiMode {
  readonly name = 'web';
  readonly description = 'search and read the web';
}
