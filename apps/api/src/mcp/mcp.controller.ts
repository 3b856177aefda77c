import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Req,
} from '@nestjs/common';
import type { Request } from 'express';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { McpServerView, McpSignInStarted } from '@metatronos/shared-types';
import {
  ApproveMcpToolsDto,
  ApproveMcpToolsResponseDto,
  CreateMcpServerDto,
  McpServerDto,
  McpSignInStartedDto,
  McpToolSwitchesDto,
  UpdateMcpServerDto,
} from './dto/mcp.dto';
import { McpServersService } from './mcp-servers.service';

/** The owner's MCP servers (the session guard makes every route owner-only; no tool reaches them). */
@ApiTags('mcp')
@ApiExtraModels(McpToolSwitchesDto)
@Controller('mcp/servers')
export class McpController {
  constructor(private readonly servers: McpServersService) {}

  @Get()
  @ApiOperation({ summary: 'The MCP servers with their status and tools' })
  @ApiOkResponse({ type: [McpServerDto] })
  list(): Promise<McpServerView[]> {
    return this.servers.list();
  }

  @Post()
  @ApiOperation({
    summary:
      'Add a stdio ({ name, command, args?, env? }) or HTTP ({ name, url, headers?, allowHosts? }) server; answers after the first connection attempt (at most 15 s) with every tool listed',
  })
  @ApiBody({ type: CreateMcpServerDto })
  @ApiCreatedResponse({ type: McpServerDto })
  @ApiBadRequestResponse({ description: 'A bad name, command, url, header…' })
  @ApiConflictResponse({ description: 'The name is taken' })
  create(@Body() body: unknown): Promise<McpServerView> {
    return this.servers.create(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One server (by id or name)' })
  @ApiOkResponse({ type: McpServerDto })
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  get(@Param('id') id: string): Promise<McpServerView> {
    return this.servers.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      "Edit a server (reconnects when how to reach it changed), turn it on or off, or set tools' enabled/unattended switches",
  })
  @ApiBody({ type: UpdateMcpServerDto })
  @ApiOkResponse({ type: McpServerDto })
  @ApiBadRequestResponse({ description: 'A bad field or an unknown tool' })
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  update(
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<McpServerView> {
    return this.servers.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Stop and delete a server (and its working folder)',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.servers.remove(id);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Approve the current definitions of new or changed tools: { tools?: name | names } (omitted: every tool waiting)',
  })
  @ApiBody({ type: ApproveMcpToolsDto, required: false })
  @ApiOkResponse({ type: ApproveMcpToolsResponseDto })
  @ApiBadRequestResponse({ description: 'An unknown tool' })
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  approve(
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<{ approved: string[]; server: McpServerView }> {
    return this.servers.approve(id, body);
  }

  @Post(':id/sign-in')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Start the OAuth 2.1 sign-in (PKCE) of an HTTP server that asks for it: answers the authorization server's page to open; its redirect comes back to GET /api/mcp/oauth/callback",
  })
  @ApiOkResponse({ type: McpSignInStartedDto })
  @ApiBadRequestResponse({
    description:
      'A stdio server, a server with its own Authorization header, or a refused authorization server (in words)',
  })
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  signIn(
    @Param('id') id: string,
    @Req() req: Request,
  ): Promise<McpSignInStarted> {
    return this.servers.signIn(id, consoleOrigin(req));
  }

  @Post(':id/sign-out')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Forget the OAuth tokens of an HTTP server (it reconnects and asks for a sign-in)',
  })
  @ApiOkResponse({ type: McpServerDto })
  @ApiNotFoundResponse({ description: '"MCP server not found"' })
  signOut(@Param('id') id: string): Promise<McpServerView> {
    return this.servers.signOut(id);
  }
}

/**
 * Where the owner's browser reaches the console: the redirect must come back there, so
 * that the session cookie goes with it. A browser's POST carries `Origin`, which the
 * request-origin guard already checked is this console's (or a trusted proxy's).
 */
function consoleOrigin(req: Request): string {
  const origin = req.headers.origin;
  if (origin && /^https?:\/\/[^/?#@\s]+$/i.test(origin)) return origin;
  return `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`;
}
