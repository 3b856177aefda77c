import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../ai-tools/ai-tool';

@AiModeProvider()
@Injectable()
export class MediaMode implements AiMode {
  readonly name = 'media';
  readonly description = 'create and edit images';
}
