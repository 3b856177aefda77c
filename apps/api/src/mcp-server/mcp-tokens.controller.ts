import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { McpTokenCreated, McpTokenList } from '@metatronos/shared-types';
import {
  CreateMcpTokenDto,
  McpTokenCreatedDto,
  McpTokenListDto,
} from './dto/mcp-tokens.dto';
import { McpTokensService } from './mcp-tokens.service';

@ApiTags('mcp')
@Controller('mcp/tokens')
export class McpTokensController {
  constructor(private readonly tokens: McpTokensService) {}

  @Get()
  @ApiOperation({
    summary:
      "The owner's tokens for /mcp (never the token itself), newest first, with the tools a token may be given",
  })
  @ApiOkResponse({ type: McpTokenListDto })
  list(): Promise<McpTokenList> {
    return this.tokens.list();
  }

  @Post()
  @ApiOperation({
    summary:
      'Create a bearer token for /mcp with a tool allow-list (read-only tools only); the token is shown this once',
  })
  @ApiCreatedResponse({ type: McpTokenCreatedDto })
  @ApiBadRequestResponse({
    description:
      'A missing or too long name, an unknown tool, or a tool never offered over MCP',
  })
  create(@Body() body: CreateMcpTokenDto): Promise<McpTokenCreated> {
    return this.tokens.create(body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Revoke a token: its next request gets 401 and its calls in flight are stopped',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ description: '"MCP token not found"' })
  async revoke(@Param('id') id: string): Promise<void> {
    await this.tokens.revoke(id);
  }
}
