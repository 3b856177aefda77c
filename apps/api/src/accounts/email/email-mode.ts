import { Injectable } from '@nestjs/common';
import { AiModeProvider, type AiMode } from '../../ai-tools/ai-tool';

/** The email mode: email_actions on the conversation's selected (or only) email account. */
@AiModeProvider()
@Injectable()
export class EmailMode implements AiMode {
  readonly name = 'email';
  readonly description =
    'search, read, send, reply to, move and flag your email';
  readonly accountKind = 'email';
}
