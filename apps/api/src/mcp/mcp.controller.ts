import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
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
import type { McpServerView } from '@metatronos/shared-types';
import {
  ApproveMcpToolsDto,
  ApproveMcpToolsResponseDto,
  CreateMcpServerDto,
  McpServerDto,
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
}
