import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { SecretsModule } from '../secrets/secrets.module';
import { UrlFetchModule } from '../url-fetch/url-fetch.module';
import { McpController } from './mcp.controller';
import { McpOAuth } from './mcp-oauth';
import { McpOAuthCallbackController } from './mcp-oauth-callback.controller';
import { McpSandbox } from './mcp-sandbox';
import { McpServersService } from './mcp-servers.service';
import { McpOAuthRecord, McpOAuthSchema } from './schemas/mcp-oauth.schema';
import { McpServerRecord, McpServerSchema } from './schemas/mcp-server.schema';

/**
 * The owner's MCP servers as modes (client side of MCP): `/api/mcp/servers`, the
 * connections (stdio in bubblewrap, HTTP through url_fetch's guard, OAuth 2.1 sign-in
 * with the SDK's flow and `/api/mcp/oauth/callback`), the approval of
 * tool definitions, and the tools handed to the registry as a tool source.
 */
@Module({
  imports: [
    AiToolsModule,
    UrlFetchModule,
    SecretsModule,
    MongooseModule.forFeature([
      { name: McpServerRecord.name, schema: McpServerSchema },
      { name: McpOAuthRecord.name, schema: McpOAuthSchema },
    ]),
  ],
  controllers: [McpController, McpOAuthCallbackController],
  providers: [McpSandbox, McpOAuth, McpServersService],
  exports: [McpServersService],
})
export class McpModule {}
