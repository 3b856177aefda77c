import { Injectable } from '@nestjs/common';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import {
  DB_QUERY_PARAMETERS,
  DB_QUERY_TOOL_DESCRIPTION,
} from '../../mongo-sandbox/db-query-tool-spec';
import { MongoSandboxService } from '../../mongo-sandbox/mongo-sandbox.service';
import { AiToolProvider, type AiTool, type AiToolContext } from '../ai-tool';

const WRITES = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'createCollection',
  'createIndex',
]);

@AiToolProvider()
@Injectable()
export class DbQueryTool implements AiTool {
  readonly definition = {
    name: 'db_query',
    description: DB_QUERY_TOOL_DESCRIPTION,
    parameters: DB_QUERY_PARAMETERS,
  };
  readonly promptLine =
    'run one MongoDB operation on your database: read any collection; write master, contacts, schedule, cronjobs and your own ai_* collections.';

  constructor(
    private readonly sandbox: MongoSandboxService,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
  ) {}

  async execute(
    args: Record<string, unknown>,
    context?: AiToolContext,
  ): Promise<string> {
    const result = await this.sandbox.execute(
      args,
      context && {
        source: context.source,
        chatId: context.chatId,
        messageId: context.messageId,
      },
    );
    const operation = String(args['operation']);
    if (WRITES.has(operation) && !('error' in result)) {
      this.events.emit('data.changed', {
        collection: String(args['collection']),
        operation,
        at: this.clock.now().toISOString(),
      });
    }
    return JSON.stringify(result);
  }
}
