import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SystemInstructionService } from '../../system-instruction/system-instruction.service';
import { DB_SCHEMA_MAX_LENGTH } from '../../system-instruction/dto/system-instruction.dto';
import { AiToolProvider, toolError, type AiTool } from '../ai-tool';

// Blank and over-long documents get the refusals below ("Nothing was saved."), not a schema check.
const UPDATE_DB_SCHEMA_ARGS = z.object({
  schema: z.string().describe('The complete new Markdown documentation'),
});

@AiToolProvider()
@Injectable()
export class UpdateDbSchemaTool
  implements AiTool<typeof UPDATE_DB_SCHEMA_ARGS>
{
  readonly name = 'update_db_schema';
  readonly modes = ['data'];
  readonly description =
    'Replace the Markdown documentation of your database (shown to you under "Your Database" in every conversation). ' +
    'Call it after creating or changing an ai_ collection: list each collection with its fields, types and purpose. ' +
    'Keep the documentation of master, contacts and schedule in it.';
  readonly schema = UPDATE_DB_SCHEMA_ARGS;
  readonly promptLine =
    'rewrite the database documentation after you create or change a collection.';

  constructor(private readonly instruction: SystemInstructionService) {}

  async execute({
    schema,
  }: z.output<typeof UPDATE_DB_SCHEMA_ARGS>): Promise<string> {
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
