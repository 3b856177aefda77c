import { Injectable } from '@nestjs/common';
import { SystemInstructionService } from '../../system-instruction/system-instruction.service';
import { DB_SCHEMA_MAX_LENGTH } from '../../system-instruction/dto/system-instruction.dto';
import { AiToolProvider, toolError, type AiTool } from '../ai-tool';

@AiToolProvider()
@Injectable()
export class UpdateDbSchemaTool implements AiTool {
  readonly definition = {
    name: 'update_db_schema',
    description:
      'Replace the Markdown documentation of your database (shown to you under "Your Database" in every conversation). ' +
      'Call it after creating or changing an ai_ collection: list each collection with its fields, types and purpose. ' +
      'Keep the documentation of master, contacts and schedule in it.',
    parameters: {
      type: 'object' as const,
      properties: {
        schema: {
          type: 'string',
          description: 'The complete new Markdown documentation',
        },
      },
      required: ['schema'],
    },
  };
  readonly promptLine =
    'replace the documentation of your collections after you create or change one.';

  constructor(private readonly instruction: SystemInstructionService) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    const schema = args['schema'] as string;
    if (!schema.trim())
      return toolError(
        'The schema documentation must not be empty. Nothing was saved.',
      );
    if (schema.length > DB_SCHEMA_MAX_LENGTH) {
      return toolError(
        `The schema documentation is ${schema.length} characters; the limit is ${DB_SCHEMA_MAX_LENGTH}. Nothing was saved.`,
      );
    }
    await this.instruction.updateDbSchema(schema, 'ai');
    return JSON.stringify({
      success: true,
      message: 'Schema updated successfully',
    });
  }
}
