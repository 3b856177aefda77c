import { Injectable } from '@nestjs/common';
import type { AiAccount, AiAccountDirectory } from '../ai-tool';

/** No accounts yet: bound until the accounts feature provides its own directory. */
@Injectable()
export class EmptyAccountDirectory implements AiAccountDirectory {
  async list(): Promise<AiAccount[]> {
    return [];
  }
}
