import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { UrlFetchModule } from '../url-fetch/url-fetch.module';
import { McpController } from './mcp.controller';
import { McpSandbox } from './mcp-sandbox';
import { McpServersService } from './mcp-servers.service';
import { McpServerRecord, McpServerSchema } from './schemas/mcp-server.schema';

/**
 * The owner's MCP servers as modes (client side of MCP): `/api/mcp/servers`, the
 * connections (stdio in bubblewrap, HTTP through url_fetch's guard), the approval of
 * tool definitions, and the tools handed to the registry as a tool source.
 */
@Module({
  imports: [
    AiToolsModule,
    UrlFetchModule,
    MongooseModule.forFeature([
      { name: McpServerRecord.name, schema: McpServerSchema },
    ]),
  ],
  controllers: [McpController],
  providers: [McpSandbox, McpServersService],
  exports: [McpServersService],
})
export class McpModule {}
