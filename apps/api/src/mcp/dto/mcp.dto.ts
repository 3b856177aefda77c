import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type {
  ApproveMcpToolsRequest,
  CreateMcpServerRequest,
  McpOAuthView,
  McpServerStatus,
  McpServerView,
  McpSignInStarted,
  McpToolDefinition,
  McpToolView,
  UpdateMcpServerRequest,
} from '@metatronos/shared-types';

// Documentation shapes: the service checks bodies with one zod schema each (mcp-servers.service.ts).

export class CreateMcpServerDto implements CreateMcpServerRequest {
  @ApiProperty({ pattern: '^[a-z0-9_]{1,24}$', example: 'github' })
  name!: string;
  @ApiPropertyOptional({
    description: 'A stdio server: a name on PATH or an absolute path',
    example: 'npx',
  })
  command?: string;
  @ApiPropertyOptional({ type: [String] })
  args?: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "Exactly the server's environment besides PATH and HOME",
  })
  env?: Record<string, string>;
  @ApiPropertyOptional({
    description: 'An HTTP server (Streamable HTTP, or the old SSE transport)',
    example: 'https://mcp.example.com/mcp',
  })
  url?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
  })
  headers?: Record<string, string>;
  @ApiPropertyOptional({
    type: [String],
    description: 'host:port entries allowed although private (a home server)',
  })
  allowHosts?: string[];
  @ApiPropertyOptional({ default: true })
  enabled?: boolean;
}

export class McpToolSwitchesDto {
  @ApiPropertyOptional()
  enabled?: boolean;
  @ApiPropertyOptional()
  unattended?: boolean;
}

export class UpdateMcpServerDto implements UpdateMcpServerRequest {
  @ApiPropertyOptional()
  command?: string;
  @ApiPropertyOptional({ type: [String] })
  args?: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'Replaces the map; a value sent back masked keeps the stored one',
  })
  env?: Record<string, string>;
  @ApiPropertyOptional()
  url?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'Replaces the map; a value sent back masked keeps the stored one',
  })
  headers?: Record<string, string>;
  @ApiPropertyOptional({ type: [String] })
  allowHosts?: string[];
  @ApiPropertyOptional()
  enabled?: boolean;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/McpToolSwitchesDto' },
    description:
      "Per tool (its name on the server, or its full name): the owner's switches",
  })
  tools?: Record<string, McpToolSwitchesDto>;
}

export class ApproveMcpToolsDto implements ApproveMcpToolsRequest {
  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description: 'Omitted: every tool waiting for approval',
  })
  tools?: string | string[];
}

export class McpServerStatusDto implements McpServerStatus {
  @ApiProperty({
    enum: ['connecting', 'ready', 'error', 'stopped', 'needs-sign-in'],
  })
  state!: McpServerStatus['state'];
  @ApiProperty({ example: 'ready with 3 tools' })
  message!: string;
  @ApiProperty()
  toolCount!: number;
  @ApiProperty({ enum: ['stdio', 'streamable-http', 'sse'], nullable: true })
  transport!: McpServerStatus['transport'];
  @ApiProperty({ nullable: true, type: Boolean })
  sandboxed!: boolean | null;
  @ApiProperty()
  restarts!: number;
  @ApiProperty({ nullable: true, type: String })
  retryAt!: string | null;
  @ApiProperty()
  at!: string;
}

export class McpToolDefinitionDto implements McpToolDefinition {
  @ApiProperty()
  description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  inputSchema!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  annotations!: Record<string, unknown> | null;
}

export class McpToolViewDto implements McpToolView {
  @ApiProperty()
  name!: string;
  @ApiProperty({ example: 'github_search_issues' })
  fullName!: string;
  @ApiProperty({ type: McpToolDefinitionDto, nullable: true })
  current!: McpToolDefinition | null;
  @ApiProperty({ type: McpToolDefinitionDto, nullable: true })
  approvedDefinition!: McpToolDefinition | null;
  @ApiProperty()
  approved!: boolean;
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty()
  unattended!: boolean;
  @ApiProperty({ enum: ['new', 'changed'], nullable: true })
  change!: McpToolView['change'];
  @ApiProperty()
  offered!: boolean;
}

export class McpOAuthViewDto implements McpOAuthView {
  @ApiProperty()
  signedIn!: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The authorization server the tokens are bound to',
  })
  issuer!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '••••abcd',
    description: 'Masked: the token itself is never shown',
  })
  accessToken!: string | null;
  @ApiProperty()
  refreshable!: boolean;
  @ApiProperty({ nullable: true, type: String })
  expiresAt!: string | null;
  @ApiProperty({ nullable: true, type: String })
  scope!: string | null;
  @ApiProperty({ description: 'A sign-in waits for its redirect' })
  pending!: boolean;
}

export class McpServerDto implements McpServerView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty({ example: 'mcp_github' })
  mode!: string;
  @ApiProperty({ enum: ['stdio', 'http'] })
  kind!: McpServerView['kind'];
  @ApiProperty({ nullable: true, type: String })
  command!: string | null;
  @ApiProperty({ type: [String] })
  args!: string[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  env!: Record<string, string>;
  @ApiProperty({ nullable: true, type: String })
  url!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers!: Record<string, string>;
  @ApiProperty({ type: [String] })
  allowHosts!: string[];
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({ type: McpServerStatusDto })
  status!: McpServerStatus;
  @ApiProperty({
    type: McpOAuthViewDto,
    nullable: true,
    description: 'OAuth sign-in of an HTTP server (null for stdio)',
  })
  oauth!: McpOAuthView | null;
  @ApiProperty({ type: [McpToolViewDto] })
  tools!: McpToolView[];
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class ApproveMcpToolsResponseDto {
  @ApiProperty({ type: [String] })
  approved!: string[];
  @ApiProperty({ type: McpServerDto })
  server!: McpServerView;
}

export class McpSignInStartedDto implements McpSignInStarted {
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "The authorization server's page to open in a new tab; null when the stored tokens were renewed without one",
  })
  authorizationUrl!: string | null;
  @ApiProperty({ type: McpServerDto })
  server!: McpServerView;
}
