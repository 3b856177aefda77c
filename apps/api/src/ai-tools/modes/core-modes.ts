import { Injectable } from '@nestjs/common';
import { AiModeProvider, DEFAULT_MODE, type AiMode } from '../ai-tool';

/** Where a conversation starts: memory and the everyday tools. */
@AiModeProvider()
@Injectable()
export class DefaultMode implements AiMode {
  readonly name = DEFAULT_MODE;
  readonly description = 'memory and everyday help (where every chat starts)';
}

/** The AI's database: queries, personal data, its own collections and their documentation. */
@AiModeProvider()
@Injectable()
export class DataMode implements AiMode {
  readonly name = 'data';
  readonly description =
    'your database: profile, contacts, schedule, ai_ collections';
}
