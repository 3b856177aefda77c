import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { Clock } from '../clock/clock';
import { SettingsModule } from '../settings/settings.module';
import { McpEndpoint } from './mcp-endpoint';
import { McpRateLimiter } from './mcp-rate-limiter';
import { McpTokensController } from './mcp-tokens.controller';
import { McpTokensService } from './mcp-tokens.service';
import { McpTokenRecord, McpTokenSchema } from './schemas/mcp-token.schema';

/**
 * Metatron as an MCP server: `/mcp` for the owner's other agents (mounted by
 * `configureApp`, outside `/api`) and `/api/mcp/tokens` for the bearer tokens.
 */
@Module({
  imports: [
    AiToolsModule,
    SettingsModule,
    MongooseModule.forFeature([
      { name: McpTokenRecord.name, schema: McpTokenSchema },
    ]),
  ],
  controllers: [McpTokensController],
  providers: [
    McpTokensService,
    McpEndpoint,
    {
      provide: McpRateLimiter,
      useFactory: (clock: Clock) => new McpRateLimiter(clock),
      inject: [Clock],
    },
  ],
  exports: [McpEndpoint],
})
export class McpServerModule {}
