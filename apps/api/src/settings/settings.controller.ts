import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  AppSettingsView,
  ConnectionTestResponse,
  ModelListResponse,
} from '@metatronos/shared-types';
import {
  ConnectionTestDto,
  ConnectionTestResultDto,
  ModelListDto,
  SettingsViewDto,
  UpdateSettingsDto,
} from './dto/update-settings.dto';
import { ModelCatalog } from './model-catalog';
import { SettingsService } from './settings.service';

@ApiTags('settings')
@Controller('settings')
export class SettingsController {
  constructor(
    private readonly settings: SettingsService,
    private readonly catalog: ModelCatalog,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Providers, keys (masked), models and timezone' })
  @ApiOkResponse({ type: SettingsViewDto })
  get(): Promise<AppSettingsView> {
    return this.settings.view();
  }

  @Patch()
  @ApiOperation({
    summary: 'Change some settings; omitted fields stay as they are',
  })
  @ApiOkResponse({ type: SettingsViewDto })
  @ApiBadRequestResponse({
    description:
      'A field is invalid (unknown time zone, unroutable model id…); nothing is written',
  })
  update(@Body() body: UpdateSettingsDto): Promise<AppSettingsView> {
    return this.settings.update(body);
  }

  @Get('models')
  @ApiOperation({
    summary: 'The models the configured providers offer',
    description:
      'Asks each provider with a key (and each OpenAI-compatible endpoint) for its models, as ids the settings and chats accept. ' +
      'A provider that cannot be asked is named in `problems`. The answer is kept for a minute, or until the settings change.',
  })
  @ApiOkResponse({ type: ModelListDto })
  models(): Promise<ModelListResponse> {
    return this.catalog.configured();
  }

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Try a provider key or an OpenAI-compatible endpoint',
    description:
      'Lists the models with the given (or stored) key: `{ ok: true, models }`, or `{ ok: false, error }` in plain words ' +
      '(key refused, unreachable, not an OpenAI-compatible server). Nothing is saved; the key is never sent back.',
  })
  @ApiOkResponse({ type: ConnectionTestResultDto })
  @ApiBadRequestResponse({
    description: 'Neither or both of provider and endpoint, or an invalid one',
  })
  test(@Body() body: ConnectionTestDto): Promise<ConnectionTestResponse> {
    if (!body.provider === !body.endpoint)
      throw new BadRequestException([
        'send either provider (gemini or openai) or endpoint, not both',
      ]);
    if (body.endpoint && body.apiKey !== undefined)
      throw new BadRequestException([
        'apiKey goes inside endpoint when testing an endpoint',
      ]);
    return this.catalog.test(body);
  }
}
