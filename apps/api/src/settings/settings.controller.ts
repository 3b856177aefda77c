import { Body, Controller, Get, Patch } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AppSettingsView } from '@metatronos/shared-types';
import { SettingsViewDto, UpdateSettingsDto } from './dto/update-settings.dto';
import { SettingsService } from './settings.service';

@ApiTags('settings')
@Controller('settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

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
}
