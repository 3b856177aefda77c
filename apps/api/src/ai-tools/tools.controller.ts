import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type {
  ModeView,
  ToolView,
  ToolsResponse,
} from '@metatronos/shared-types';
import { SettingsService } from '../settings/settings.service';
import type { AiTool } from './ai-tool';
import { AiToolRegistry } from './ai-tool-registry';

class ToolViewDto implements ToolView {
  @ApiProperty({ example: 'db_query' })
  name!: string;
  @ApiProperty()
  description!: string;
  @ApiProperty({
    description: 'Offered when its mode is active: available and switched on',
  })
  available!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'No Brave Search API key is set.',
  })
  reason!: string | null;
  @ApiProperty({
    description:
      'False when the owner switched it off (settings disabledTools)',
  })
  enabled!: boolean;
}

class ModeViewDto implements ModeView {
  @ApiProperty({ example: 'data' })
  name!: string;
  @ApiProperty()
  description!: string;
  @ApiProperty({ type: String, nullable: true })
  accountKind!: string | null;
  @ApiProperty({ type: [ToolViewDto] })
  tools!: ToolViewDto[];
}

class ToolsResponseDto implements ToolsResponse {
  @ApiProperty({ type: [ModeViewDto] })
  modes!: ModeViewDto[];
  @ApiProperty({
    type: [ToolViewDto],
    description: 'Offered in every mode (set_mode, select_account)',
  })
  meta!: ToolViewDto[];
}

@ApiTags('tools')
@Controller('tools')
export class ToolsController {
  constructor(
    private readonly registry: AiToolRegistry,
    private readonly settings: SettingsService,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'The modes (default first) with their tools, whether each is available, why not, and whether the owner switched it off',
  })
  @ApiOkResponse({ type: ToolsResponseDto })
  async list(): Promise<ToolsResponse> {
    const settings = await this.settings.get();
    const context = { source: 'chat' as const, settings };
    const view = async (tool: AiTool): Promise<ToolView> => {
      const enabled = !settings.disabledTools.includes(tool.name);
      const usable = await (tool.isAvailable?.(context) ?? true);
      const reason = usable
        ? null
        : ((await tool.unavailableReason?.(context)) ??
          'Not available with the current settings.');
      return {
        name: tool.name,
        description: tool.description,
        available: usable && enabled,
        reason,
        enabled,
      };
    };
    return {
      modes: await Promise.all(
        this.registry.modeTools().map(async ({ mode, tools }) => ({
          name: mode.name,
          description: mode.description,
          accountKind: mode.accountKind ?? null,
          tools: await Promise.all(tools.map(view)),
        })),
      ),
      meta: await Promise.all(
        this.registry
          .names()
          .filter((n) => this.registry.isMetaTool(n))
          .map((n) => view(this.registry.tool(n) as AiTool)),
      ),
    };
  }
}
